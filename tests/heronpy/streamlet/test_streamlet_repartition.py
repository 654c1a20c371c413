"""``repartition(n, function)``: the function picks each element's partitions through a
Python custom grouping (``Grouping.custom``), run in the emitting task on both engines."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.heronpy.streamlet.streamlet_runs import run_streamlet


def _custom_groupings_refused() -> bool:
    """Whether the engines still refuse Python custom groupings at load (issue 40)."""
    from heronpy.api.component.translate import UnsupportedHeronpyFeature, storm_grouping
    from heronpy.api.custom_grouping import ICustomGrouping
    from heronpy.api.stream import Grouping
    try:
        storm_grouping("bolt", "spout", Grouping.custom(ICustomGrouping()))
    except UnsupportedHeronpyFeature:
        return True
    return False


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.xfail(_custom_groupings_refused(), run=False,
                   reason="Grouping.custom is refused at load until the engines run Python "
                          "custom groupings (issue 40, the lead's change)")
@pytest.mark.parametrize("engine, seconds", [("storm", 5)])
def test_repartition_function_picks_each_elements_partitions(engine, seconds, tmp_path):
    run = run_streamlet("streamlet_repartition", engine, seconds, tmp_path)
    numbers = list(range(1, 31))
    by_residue = run.tasks("by_residue")
    assert sorted(n for _, n in by_residue) == numbers
    residues_of_task: dict[int, set[int]] = {}
    for task, n in by_residue:
        residues_of_task.setdefault(task, set()).add(n % 3)
    # partition i (the i-th lowest task) got exactly the numbers with n % 3 == i
    assert [residues_of_task[task] for task in sorted(residues_of_task)] == [{0}, {1}, {2}]
    everywhere = run.tasks("to_every_partition")
    assert Counter(n for _, n in everywhere) == {n: 2 for n in numbers}
    assert len({task for task, _ in everywhere}) == 2
