"""One finite heron run over two containers (two Stream Managers): startup, steady
state and clean shutdown, and where each grouping sent every tuple.

The fixture topology (projects/groupings) has a spout with one task per container
emitting ``[n, key, src_task]`` (and a direct stream ``[n, target, src_task]``); each
grouping kind feeds its own sink bolt, which emits ``[its task, *values]`` on a leaf
stream. Every leaf tuple is captured, so the outputs say which task got which tuple.
"""

from __future__ import annotations

import collections

import pytest

from engine.common.grouping import fields_key_hash
from tests.e2e.heron.helpers import PROJECTS, HeronRun, describe_run, leaf_tuples

pytestmark = pytest.mark.timeout(180)

LIMIT = 500  # tuples per spout task and stream
SINKS = {"shuffle_sink": 2, "fields_sink": 3, "all_sink": 2, "global_sink": 2,
         "none_sink": 2, "direct_sink": 2, "local_sink": 2}


@pytest.fixture(scope="module")
def run(tmp_path_factory, module_imports):
    heron = HeronRun(PROJECTS / "groupings", "e2e_groupings",
                     tmp_path_factory.mktemp("heron-groupings"), options={"e2e.limit": LIMIT})
    try:
        heron.start()
        heron.finish(time_limit=120)
    finally:
        heron.close()
    return heron


def expected_pairs(run) -> collections.Counter:
    """(src task, n) of every tuple the spout tasks emitted on one stream."""
    return collections.Counter((src, n) for src in run.placement.tasks["numbers"]
                               for n in range(LIMIT))


def by_task(rows) -> dict[int, list]:
    out: dict[int, list] = collections.defaultdict(list)
    for row in rows:
        out[row[0]].append(row)
    return out


def pairs(rows) -> collections.Counter:
    return collections.Counter((row[3], row[1]) for row in rows)


def assert_each_tuple_once(rows, run, what: str) -> None:
    """Every tuple of every spout task arrived exactly once; on failure, say which spout
    tasks lost or repeated how many, and how the run ended (not a 1,000-line diff)."""
    got, want = pairs(rows), expected_pairs(run)
    if got == want:
        return
    missing, extra = want - got, got - want
    lost = collections.Counter(src for src, _ in missing.elements())
    repeated = collections.Counter(src for src, _ in extra.elements())
    pytest.fail(f"{what}: missing per spout task {dict(lost)}, extra per spout task "
                f"{dict(repeated)}\n{describe_run(run.result)}")


# -- startup, steady state, shutdown -----------------------------------------------------
def test_physical_plan_has_two_stream_managers_and_every_task(run):
    placement = run.placement
    assert placement.stmgrs == ["stmgr-1", "stmgr-2"]
    assert {c: len(t) for c, t in placement.tasks.items()} == {"numbers": 2, **SINKS}
    # the spout has a task in each container, so tuples must cross between the two
    assert {placement.container_of[t] for t in placement.tasks["numbers"]} == {"stmgr-1", "stmgr-2"}
    assert {"heron-tmanager", "stmgr-1", "stmgr-2", "metricsmgr-1", "metricsmgr-2",
            "executor-0", "executor-1", "executor-2"} <= set(run.processes)
    instances = {n for n in run.processes if n.startswith("container_")}
    assert len(instances) == 2 + sum(SINKS.values())


def test_run_finished_with_every_task_done_and_all_tuples_through(run):
    result = run.result
    assert result.reason == "finished" and result.error is None, describe_run(result)
    assert len(result.tasks_done) == 2 + sum(SINKS.values())
    assert all(result.tasks_done.values()), describe_run(result)
    stats = result.components
    assert stats["numbers"].emitted == 2 * 2 * LIMIT  # two tasks, two streams
    for sink in SINKS:
        received = 2 * LIMIT * (SINKS[sink] if sink == "all_sink" else 1)
        assert stats[sink].executed == received, sink
        assert len(leaf_tuples(result, sink)) == received, sink


def test_tuples_reached_tasks_in_both_containers_across_stream_managers(run):
    container_of = run.placement.container_of
    crossed = collections.Counter()
    for sink in SINKS:
        for row in leaf_tuples(run.result, sink):
            crossed[(container_of[row[3]], container_of[row[0]])] += 1
    # tuples went both ways between the two containers, and stayed inside each
    assert set(crossed) == {("stmgr-1", "stmgr-1"), ("stmgr-1", "stmgr-2"),
                            ("stmgr-2", "stmgr-1"), ("stmgr-2", "stmgr-2")}


def test_every_process_exited_and_the_state_is_gone(run):
    assert run.alive(timeout=10) == []
    assert run.processes_naming_the_run() == []
    assert not list((run.working_dir / "pids").glob("*.pid"))
    state = run.runner.state_spec.open()
    try:
        for kind in ("topologies", "packingplans", "pplans", "executionstate", "tmanagers"):
            assert state.get(kind, "e2e_groupings") is None, kind
    finally:
        state.close()


# -- groupings ---------------------------------------------------------------------------
def assert_spread(rows, tasks, name):
    """Every tuple arrived once, every task got some, none got far more than its share."""
    counts = collections.Counter(row[0] for row in rows)
    assert set(counts) == set(tasks), f"{name}: tasks that got tuples {dict(counts)}"
    share = len(rows) / len(tasks)
    for count in counts.values():
        assert 0.5 * share <= count <= 1.5 * share, f"{name}: uneven {dict(counts)}"


def test_shuffle_spreads_evenly_over_all_tasks(run):
    rows = leaf_tuples(run.result, "shuffle_sink")
    assert_each_tuple_once(rows, run, "shuffle")
    assert_spread(rows, run.placement.tasks["shuffle_sink"], "shuffle")


def test_none_behaves_as_shuffle(run):
    rows = leaf_tuples(run.result, "none_sink")
    assert_each_tuple_once(rows, run, "none")
    assert_spread(rows, run.placement.tasks["none_sink"], "none")


def test_fields_sends_each_key_to_one_task_chosen_by_the_fields_hash(run):
    rows = leaf_tuples(run.result, "fields_sink")
    tasks = run.placement.tasks["fields_sink"]
    assert_each_tuple_once(rows, run, "fields")
    owners: dict[str, set[int]] = collections.defaultdict(set)
    for task, _, key, _ in rows:
        owners[key].add(task)
    assert len(owners) == 17
    for key, owner in owners.items():
        assert owner == {tasks[fields_key_hash([key], [0]) % len(tasks)]}, key
    assert len(set().union(*owners.values())) > 1  # the keys did not all land on one task


def test_all_copies_every_tuple_to_every_task(run):
    rows = leaf_tuples(run.result, "all_sink")
    per_task = by_task(rows)
    assert sorted(per_task) == run.placement.tasks["all_sink"]
    for task, task_rows in per_task.items():
        assert_each_tuple_once(task_rows, run, f"all, task {task}")


def test_global_sends_everything_to_the_lowest_task(run):
    rows = leaf_tuples(run.result, "global_sink")
    tasks = run.placement.tasks["global_sink"]
    assert_each_tuple_once(rows, run, "global")
    assert {row[0] for row in rows} == {min(tasks)}


def test_direct_reaches_exactly_the_named_task(run):
    rows = leaf_tuples(run.result, "direct_sink")
    tasks = run.placement.tasks["direct_sink"]
    assert_each_tuple_once(rows, run, "direct")
    assert all(task == target for task, _, target, _ in rows)
    # the spout names tasks[n % 2]: both tasks, in both containers, got their share
    assert collections.Counter(row[0] for row in rows) == {t: LIMIT for t in tasks}
    assert {run.placement.container_of[t] for t in tasks} == {"stmgr-1", "stmgr-2"}


def test_local_or_shuffle_keeps_tuples_in_the_emitters_container(run):
    rows = leaf_tuples(run.result, "local_sink")
    container_of = run.placement.container_of
    tasks = run.placement.tasks["local_sink"]
    # precondition: each container holds a spout task and a local_sink task
    assert {container_of[t] for t in tasks} == {"stmgr-1", "stmgr-2"}
    assert_each_tuple_once(rows, run, "local")
    assert all(container_of[task] == container_of[src] for task, _, _, src in rows)
    assert set(collections.Counter(row[0] for row in rows)) == set(tasks)
