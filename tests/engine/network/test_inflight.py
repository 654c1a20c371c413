"""The batching keys that bound what a hop holds: Heron's names and defaults, an old name
still honoured, and a bad value refused at load with the key named (never a Stream
Manager or instance dying at start in every container)."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from engine.common.network.inflight import DATA_HWM, hop_cap_bytes
from engine.config.batching import (
    BATCH_BYTES_KEY,
    BATCH_TIME_KEY,
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_TIME_MS,
    OLD_BATCH_BYTES_KEY,
    Batching,
    InflightConfigError,
    batching,
)

REPO = Path(__file__).resolve().parents[3]


def test_defaults_are_heron_sized_batches_sent_within_a_few_milliseconds():
    assert batching({}) == Batching(rows=1024, bytes=DEFAULT_BATCH_BYTES,
                                    secs=DEFAULT_BATCH_TIME_MS / 1000)
    assert DEFAULT_BATCH_BYTES == 32 * 1024  # heron.instance.emit.batch.size.bytes
    assert hop_cap_bytes({}) == DATA_HWM * DEFAULT_BATCH_BYTES


def test_heron_keys_set_bytes_and_time():
    got = batching({BATCH_BYTES_KEY: 4096, BATCH_TIME_KEY: 2.5, "heron.instance.batch.size": 10})
    assert got == Batching(rows=10, bytes=4096, secs=0.0025)
    assert hop_cap_bytes({BATCH_BYTES_KEY: 4096}) == DATA_HWM * 4096


def test_the_old_bytes_key_is_read_with_a_warning_and_heron_s_wins(caplog):
    with caplog.at_level(logging.WARNING, logger="heron.network"):
        assert batching({OLD_BATCH_BYTES_KEY: 2048}).bytes == 2048
    assert BATCH_BYTES_KEY in caplog.text
    assert batching({OLD_BATCH_BYTES_KEY: 2048, BATCH_BYTES_KEY: 8192}).bytes == 8192


@pytest.mark.parametrize("key,value", [(BATCH_BYTES_KEY, 0), (BATCH_BYTES_KEY, 1.5),
                                       (BATCH_BYTES_KEY, "32k"), (BATCH_TIME_KEY, -1),
                                       (BATCH_TIME_KEY, True), ("heron.instance.batch.size", 0)])
def test_a_bad_value_names_its_key(key, value):
    with pytest.raises(InflightConfigError, match=key.replace(".", r"\.")):
        batching({key: value})


@pytest.mark.parametrize("option,named", [
    (f"{BATCH_TIME_KEY}=0", BATCH_TIME_KEY),
    ("heron.streammgr.network.backpressure.lowwatermark.mb=20",
     "heron.streammgr.network.backpressure.lowwatermark.mb")])
def test_heron_run_refuses_a_bad_value_in_one_line(option, named, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "engine.tools.cli.main", "run",
                           str(REPO / "examples" / "wordcount"), "-o", option, "--time", "3"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert named in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
