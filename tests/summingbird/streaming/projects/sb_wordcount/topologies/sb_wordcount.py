"""``heron run`` takes a Summingbird job like any topology: plan it in a topology file.

The store path is absolute (each heron instance runs in the run's own directory) and
comes from ``SB_WORDCOUNT_STORE`` when set, so a test can point it at a temporary file.
"""

import os
from pathlib import Path

from sb_wordcount_job import word_count

from compat.summingbird import CacheSize, FlushFrequency, Options, SummerParallelism
from compat.summingbird.platforms.streaming import plan_topology

STORE = os.environ.get("SB_WORDCOUNT_STORE") or str(
    Path(__file__).resolve().parent.parent / "counts.sqlite")

SbWordCount = plan_topology(
    word_count(STORE),
    {"word-counts": Options(SummerParallelism(2), CacheSize(4), FlushFrequency(0.3))},
    name="sb_wordcount")
