"""Heron's streamlet examples (word count, join), in Heron's shape under
examples/topologies/streamlet_*.py, run unchanged with ``heron run``; their results are
what ``log()`` writes in the components' logs."""

from __future__ import annotations

import re

import pytest

from tests.heronpy.streamlet.streamlet_runs import run_streamlet

#: str((KeyedWindow, result)) as LogBolt logs it
KEYED = re.compile(r"^\(KeyedWindow \{key: (?P<key>.+?), window: Window \{start_time: "
                   r"(?P<start>[\d.]+), end_time: (?P<end>[\d.]+)\}\}, (?P<result>.+)\)$")
WORDS = {"Mary", "Had", "a", "little", "lamb", "I", "Love", "You"}


def _keyed(lines: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for line in lines:
        match = KEYED.match(line)
        assert match, line
        out.append((match["key"], match["end"], match["result"]))
    return out


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine, seconds", [("storm", 5), ("heron", 9)])
def test_word_count_streamlet_counts_every_word_of_a_window_alike(engine, seconds, tmp_path):
    run = run_streamlet("streamlet_word_count", engine, seconds, tmp_path)
    windows: dict[str, dict[str, int]] = {}
    for key, end, result in _keyed(run.logged("log-1")):
        windows.setdefault(end, {})[key] = int(result)
    # the last window may be cut short by the end of the run; the others hold every word
    complete = [counts for counts in windows.values() if set(counts) == WORDS]
    assert complete and set().union(*windows.values()) == WORDS
    for counts in complete:
        # a window is a contiguous run of the looped sentences' words: counts differ by <= 1
        assert max(counts.values()) - min(counts.values()) <= 1, counts
        assert min(counts.values()) > 0


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_join_streamlet_joins_the_two_sources_values_of_key1(tmp_path):
    run = run_streamlet("streamlet_join", "storm", 5, tmp_path)
    joined = _keyed(run.logged("log-1"))
    assert joined
    assert {key for key, _, _ in joined} == {"key1"}
    assert {result for _, _, result in joined} <= {"'ac'", "'ad'", "'bc'", "'bd'"}
