"""Streamlet operators run by the engines against the same pipelines in plain Python.

One topology (examples/topologies/streamlet_operators.py) holds every operator on bounded
sources; each pipeline ends in a stage nobody consumes, whose tuples the run captures.
Window results are compared in a way no timing can change: tumbling windows partition
the elements (their per-window results add up to the whole), and a window longer than the
run keeps everything (so its fullest firing for each key is the key's whole join)."""

from __future__ import annotations

import glob
import importlib.util
from collections import Counter

import pytest

from tests.heronpy.streamlet.streamlet_runs import TOPOLOGIES, run_streamlet

#: the heron engine starts a process per task (about 35 here): time for them to start
ENGINES = [("storm", 5), ("heron", 20)]


def _data():
    """The topology file's module (its data), imported without running its main."""
    spec = importlib.util.spec_from_file_location("streamlet_operators_data",
                                                  TOPOLOGIES / "streamlet_operators.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _joins(numbers, names, kind):
    """Plain-Python joins of (n % 5, n) with NAMES: [key, result] rows."""
    left = [(n % 5, n) for n in numbers]
    rows = [[k, f"{n}:{name}"] for k, n in left for k2, name in names if k == k2]
    right_keys = {k for k, _ in names}
    left_keys = {k for k, _ in left}
    if kind in ("left", "outer"):
        rows += [[k, f"{n}:None"] for k, n in left if k not in right_keys]
    if kind == "outer":
        rows += [[k, f"None:{name}"] for k, name in names if k not in left_keys]
    return Counter(map(tuple, rows))


def _fullest_windows(run, component):
    """For each key, its rows in the window that holds most of them, merged ([key, end,
    result] records; a window is its end time). The window keeps everything, so each
    firing after the sources ended holds all of a key's rows if the key's elements met in
    one task (the last firing may be cut short by the end of the run)."""
    windows: dict[tuple, Counter] = {}
    for key, end, result in run.values(component):
        windows.setdefault((key, end), Counter())[(key, result)] += 1
    fullest: dict = {}
    for (key, _), rows in windows.items():
        if sum(rows.values()) > sum(fullest.get(key, Counter()).values()):
            fullest[key] = rows
    by_end: dict[float, Counter] = {}
    for (_, end), rows in windows.items():
        by_end[end] = by_end.get(end, Counter()) + rows
    return sum(fullest.values(), Counter()), list(by_end.values())


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine, seconds", ENGINES)
def test_streamlet_operators_match_plain_python(engine, seconds, tmp_path):
    data = _data()
    consumed = tmp_path / "consumed.txt"
    run = run_streamlet("streamlet_operators", engine, seconds, tmp_path,
                        env={"STREAMLET_CONSUME_FILE": str(consumed)})
    lines = [line for path in sorted(glob.glob(data.TEXT_FILES))
             for line in open(path, encoding="utf8")]
    words = [word for line in lines for word in line.split()]
    numbers = data.NUMBERS

    # flat_map, filter, map, then reduce_by_key_and_window over tumbling windows (by key)
    counts = Counter()
    for key, count in run.values("word_counts"):
        counts[key] += count
    assert counts == Counter(w.lower() for w in words if len(w) > 3)
    # union of a map and another source
    assert Counter(run.values("lengths_and_numbers")) == \
        Counter(len(w) for w in words) + Counter(numbers)
    # repartition (shuffled over 3 partitions) and clone
    assert sorted(run.values("spread")) == numbers
    assert len({task for task, _ in run.tasks("spread")}) == 3
    for index in range(2):
        assert sorted(run.values(f"negated_{index}")) == sorted(-n for n in numbers)
    # repartition by a function (a custom grouping run in the emitting task): partition i
    # (the stage's i-th lowest task) gets the numbers with n % 3 == i; a list of
    # partitions sends the element to each
    residues_of_task: dict[int, set[int]] = {}
    for task, n in run.tasks("by_residue_3"):
        residues_of_task.setdefault(task, set()).add(n % 3)
    assert sorted(run.values("by_residue_3")) == numbers
    assert [residues_of_task[task] for task in sorted(residues_of_task)] == [{0}, {1}, {2}]
    everywhere = run.tasks("to_every_partition")
    assert Counter(n for _, n in everywhere) == {n: 2 for n in numbers}
    assert len({task for task, _ in everywhere}) == 2
    # transform (a TransformOperator emitting through its context)
    assert sorted(run.values("even_plus_one")) == [[n, n + 1] for n in numbers if n % 2 == 0]
    # reduce_by_window over tumbling windows: the windows' sums add up to the sum
    assert sum(run.values("window_sums")) == sum(numbers)
    # joins over a window that outlives the run: each key's fullest window is its whole
    # join (the key met its partners in one task), and no window holds a row it has not
    for component, kind in (("inner_joined", "inner"), ("outer_joined", "outer"),
                            ("left_joined", "left")):
        whole = _joins(numbers, data.NAMES, kind)
        last, every = _fullest_windows(run, component)
        assert last == whole, (component, last, whole)
        assert all(not (rows - whole) for rows in every), component
    # the inner join ran on 2 partitions: each key met its partners in one task
    assert run.summary["components"]["inner"]["tasks"] == 2
    # consume and log
    assert Counter(consumed.read_text().splitlines()) == Counter(words)
    assert Counter(run.logged("log-1")) == Counter(w for w in words if len(w) > 3)
