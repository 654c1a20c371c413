"""The Topology Master's checkpointer and restorer (engine/tmanager/stateful_controller.py),
driven with a clock and a recording of what it sends: consistent checkpoints recorded and
older ones deleted, timeouts counted, restores falling back to older checkpoints, stale
answers ignored, ``start.clean`` on the first start only; a final savepoint (``heron kill
--savepoint``) stops checkpoints only once written, and one that fails stops nothing."""

from __future__ import annotations

from types import SimpleNamespace

from compat.storm_api.config import Checkpointing
from engine.messages import ckptmgr_pb2, common_pb2, physical_plan_pb2
from engine.statemgr.local_fs import LocalFileSystemStateManager
from engine.tmanager.stateful_controller import StatefulController


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.ms = 1_000_000

    def __call__(self) -> float:
        return self.now

    def wall(self) -> int:
        self.ms += 1
        return self.ms


class Storage:
    def __init__(self) -> None:
        self.kept: list[set[str]] = []

    def dispose(self, keep: set[str]) -> int:
        self.kept.append(set(keep))
        return 0

    def describe(self) -> str:
        return "test storage"


def pplan() -> physical_plan_pb2.PhysicalPlan:
    plan = physical_plan_pb2.PhysicalPlan()
    for sid in ("stmgr-1", "stmgr-2"):
        plan.stmgrs.add(id=sid)
    for task, comp, sid in ((1, "spout", "stmgr-1"), (2, "count", "stmgr-1"),
                            (3, "count", "stmgr-2")):
        inst = plan.instances.add(stmgr_id=sid)
        inst.info.task_id = task
        inst.info.component_name = comp
    return plan


def controller(tmp_path, **settings):
    clock = Clock()
    sent: list[tuple[str, object]] = []
    state = LocalFileSystemStateManager(tmp_path / "state")
    ctl = StatefulController("wc", state, Checkpointing(**{"interval_secs": 1.0,
                                                           "timeout_secs": 5.0, **settings}),
                             Storage(), send=lambda sid, m: sent.append((sid, m)),
                             clock=clock, wall_ms=clock.wall)
    return ctl, clock, sent, state


def answer_restore(ctl, sent, status=common_pb2.OK, only=None):
    requests = [
        (sid, m) for sid, m in sent if isinstance(m, ckptmgr_pb2.RestoreTopologyStateRequest)
    ]
    sent.clear()
    for sid, request in requests:
        if only and sid not in only:
            continue
        response = ckptmgr_pb2.RestoreTopologyStateResponse(
            checkpoint_id=request.checkpoint_id, restore_txid=request.restore_txid, stmgr=sid)
        response.status.status = status
        ctl.on_restore_response(response)
    return requests


def take_checkpoint(ctl, clock, sent, tasks=(1, 2, 3)) -> str:
    clock.now += 1.0
    ctl.tick()
    starts = [m for _, m in sent if isinstance(m, ckptmgr_pb2.StartStatefulCheckpoint)]
    assert len(starts) == 2, sent
    checkpoint_id = starts[0].checkpoint_id
    sent.clear()
    for task in tasks:
        ctl.on_stored(ckptmgr_pb2.InstanceStateStored(checkpoint_id=checkpoint_id,
                                                      task_id=task, bytes=10))
    return checkpoint_id


def test_a_checkpoint_is_consistent_once_every_task_stored_and_is_recorded(tmp_path):
    ctl, clock, sent, state = controller(tmp_path, retained=2)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "the topology started")
    requests = answer_restore(ctl, sent)
    assert {r.checkpoint_id for _, r in requests} == {""}  # nothing stored: empty state
    assert [m for _, m in sent if isinstance(m, ckptmgr_pb2.StartStmgrStatefulProcessing)]
    sent.clear()
    ctl.tick()
    assert sent == []  # not before the interval
    first = take_checkpoint(ctl, clock, sent, tasks=(1, 2))
    assert ctl.figures.completed == 0  # task 3 has not stored
    ctl.on_stored(ckptmgr_pb2.InstanceStateStored(checkpoint_id=first, task_id=3, bytes=5))
    assert ctl.figures.completed == 1 and ctl.figures.last_bytes == 25
    saved = [m for _, m in sent if isinstance(m, ckptmgr_pb2.StatefulConsistentCheckpointSaved)]
    assert [m.consistent_checkpoint.checkpoint_id for m in saved] == [first, first]
    sent.clear()
    second = take_checkpoint(ctl, clock, sent)
    third = take_checkpoint(ctl, clock, sent)
    stored = state.get("statefulcheckpoints", "wc")
    assert [c.checkpoint_id for c in stored.consistent_checkpoints] == [third, second]
    assert ctl.storage.kept[-1] == {third, second, ""}  # older ones are deleted
    assert int(first.split("-")[1]) < int(second.split("-")[1]) < int(third.split("-")[1])


def test_a_checkpoint_not_complete_within_the_timeout_is_abandoned_and_the_next_starts(tmp_path):
    ctl, clock, sent, _ = controller(tmp_path)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    answer_restore(ctl, sent)
    sent.clear()
    stuck = take_checkpoint(ctl, clock, sent, tasks=(1, 2))
    clock.now += 2.0
    ctl.tick()
    assert sent == []  # one in flight at a time
    clock.now += 4.0
    ctl.tick()
    assert ctl.figures.abandoned == 1
    starts = [m for _, m in sent if isinstance(m, ckptmgr_pb2.StartStatefulCheckpoint)]
    assert starts and starts[0].checkpoint_id != stuck
    ctl.on_stored(ckptmgr_pb2.InstanceStateStored(checkpoint_id=stuck, task_id=3))
    assert ctl.figures.completed == 0  # a late report for an abandoned one counts for nothing


def test_a_task_that_cannot_store_abandons_the_checkpoint(tmp_path):
    ctl, clock, sent, _ = controller(tmp_path)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    answer_restore(ctl, sent)
    clock.now += 1.0
    ctl.tick()
    checkpoint_id = sent[-1][1].checkpoint_id
    ctl.on_stored(ckptmgr_pb2.InstanceStateStored(checkpoint_id=checkpoint_id, task_id=1,
                                                  error="disk full"))
    assert ctl.figures.abandoned == 1 and ctl.in_flight is None


def test_a_restore_falls_back_to_older_checkpoints_then_empty_state_and_ignores_stale_answers(
        tmp_path):
    ctl, clock, sent, state = controller(tmp_path)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    answer_restore(ctl, sent)
    older = take_checkpoint(ctl, clock, sent)
    newer = take_checkpoint(ctl, clock, sent)
    sent.clear()
    ctl.on_reset(ckptmgr_pb2.ResetTopologyState(reason="task 2 failed: boom"), "stmgr-1")
    requests = [m for _, m in sent]
    assert {m.checkpoint_id for m in requests} == {newer}
    stale_txid = requests[0].restore_txid
    # stmgr-2 cannot read the newest: the older one is tried under a new transaction
    answer_restore(ctl, sent, status=common_pb2.NOTOK, only={"stmgr-2"})
    retry = [m for _, m in sent if isinstance(m, ckptmgr_pb2.RestoreTopologyStateRequest)]
    assert {m.checkpoint_id for m in retry} == {older}
    assert retry[0].restore_txid > stale_txid
    # an OK for the old transaction changes nothing
    late = ckptmgr_pb2.RestoreTopologyStateResponse(checkpoint_id=newer, restore_txid=stale_txid,
                                                    stmgr="stmgr-1")
    late.status.status = common_pb2.OK
    ctl.on_restore_response(late)
    assert ctl.restore is not None
    answer_restore(ctl, sent, status=common_pb2.NOTOK, only={"stmgr-1"})
    last = [m for _, m in sent if isinstance(m, ckptmgr_pb2.RestoreTopologyStateRequest)]
    assert {m.checkpoint_id for m in last} == {""}
    answer_restore(ctl, sent)
    assert ctl.running and ctl.figures.last_restore_checkpoint == "empty"
    assert ctl.figures.last_restore_reason == "task 2 failed: boom"


def test_start_clean_forgets_checkpoints_on_the_first_start_only(tmp_path):
    ctl, clock, sent, state = controller(tmp_path)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    answer_restore(ctl, sent)
    kept = take_checkpoint(ctl, clock, sent)
    restarted, _, sent2, _ = controller(tmp_path, start_clean=True)
    restarted.state = state
    restarted.load(first_start=False)  # a restarted Topology Master keeps them
    assert [c.checkpoint_id for c in restarted.consistent] == [kept]
    fresh, _, _, _ = controller(tmp_path, start_clean=True)
    fresh.state = state
    fresh.load(first_start=True)
    assert fresh.consistent == []
    assert list(state.get("statefulcheckpoints", "wc").consistent_checkpoints) == []


def test_a_restore_left_unanswered_is_asked_again_under_a_new_transaction(tmp_path):
    ctl, clock, sent, _ = controller(tmp_path)
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    first = [m for _, m in sent]
    sent.clear()
    clock.now += 4.0
    ctl.tick()
    assert sent == []
    clock.now += 2.0
    ctl.tick()  # past the 5 s timeout
    again = [m for _, m in sent if isinstance(m, ckptmgr_pb2.RestoreTopologyStateRequest)]
    assert len(again) == 2 and again[0].restore_txid > first[0].restore_txid
    answer_restore(ctl, sent)
    assert ctl.running


# -- savepoints: a final one (heron kill --savepoint) that fails stops nothing ------------
class Written:
    """Stands in for write_savepoint: the savepoints it wrote, or the error it raises."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.fail: Exception | None = None

    def __call__(self, storage, checkpoint_id, directory, savepoint_id, metadata):
        if self.fail is not None:
            raise self.fail
        self.ids.append(savepoint_id)
        return f"{directory}/{savepoint_id}"


def savepoint_controller(tmp_path, monkeypatch):
    written = Written()
    monkeypatch.setattr("engine.tmanager.stateful_controller.write_savepoint", written)
    ctl, clock, sent, _ = controller(tmp_path, savepoints=str(tmp_path / "savepoints"))
    ctl.load(first_start=True)
    ctl.new_plan(pplan(), "pack-1", "start")
    answer_restore(ctl, sent)
    sent.clear()
    return ctl, clock, sent, written


def ask_savepoint(ctl, savepoint_id, final=False) -> list:
    answers: list = []
    ctl.request_savepoint(savepoint_id, answers.append, final=final)
    return answers


def starts_checkpoints(ctl, clock, sent, times=3) -> bool:
    """Whether the timer still starts checkpoints (and they complete), ``times`` in a row."""
    for _ in range(times):
        clock.now += 1.0
        ctl.tick()
        starts = [m for _, m in sent if isinstance(m, ckptmgr_pb2.StartStatefulCheckpoint)]
        sent.clear()
        if not starts:
            return False
        for checkpoint_id in {m.checkpoint_id for m in starts}:
            for task in (1, 2, 3):
                ctl.on_stored(ckptmgr_pb2.InstanceStateStored(
                    checkpoint_id=checkpoint_id, task_id=task, bytes=1))
    return True


def test_checkpoints_go_on_after_a_final_savepoint_abandoned_and_a_plain_savepoint(
        tmp_path, monkeypatch):
    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    final = ask_savepoint(ctl, "before-kill", final=True)
    ctl.tick()  # starts at once, with the savepoint
    clock.now += 6.0
    ctl.tick()  # nobody stored within the 5 s timeout: abandoned
    assert [a.status.status for a in final] == [common_pb2.NOTOK]
    assert "abandoned" in final[0].status.message
    plain = ask_savepoint(ctl, "later")  # after the checkpoint the timeout's tick started
    assert starts_checkpoints(ctl, clock, sent, times=2)
    assert [a.status.status for a in plain] == [common_pb2.OK] and written.ids == ["later"]
    assert starts_checkpoints(ctl, clock, sent)


def test_checkpoints_go_on_after_a_final_savepoint_that_cannot_be_written_and_a_plain_one(
        tmp_path, monkeypatch):
    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    written.fail = OSError(28, "No space left on device")
    final = ask_savepoint(ctl, "before-kill", final=True)
    assert starts_checkpoints(ctl, clock, sent, times=1)
    assert [a.status.status for a in final] == [common_pb2.NOTOK]
    assert "No space left" in final[0].status.message
    assert starts_checkpoints(ctl, clock, sent)  # not stopped by the failed final one
    written.fail = None
    plain = ask_savepoint(ctl, "later")
    assert starts_checkpoints(ctl, clock, sent, times=1)
    assert [a.status.status for a in plain] == [common_pb2.OK]
    assert starts_checkpoints(ctl, clock, sent)


def test_a_final_savepoint_given_up_by_a_rollback_is_answered_at_once_and_stops_nothing(
        tmp_path, monkeypatch):
    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    final = ask_savepoint(ctl, "before-kill", final=True)
    ctl.tick()
    ctl.on_reset(ckptmgr_pb2.ResetTopologyState(reason="task 2 failed"), "stmgr-1")
    assert [a.status.status for a in final] == [common_pb2.NOTOK]  # the kill need not wait
    assert "rolls back" in final[0].status.message
    answer_restore(ctl, sent)
    sent.clear()
    ask_savepoint(ctl, "later")
    assert starts_checkpoints(ctl, clock, sent)
    assert written.ids == ["later"]


def test_a_written_final_savepoint_is_the_last_checkpoint_until_the_topology_is_activated(
        tmp_path, monkeypatch):
    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    final = ask_savepoint(ctl, "before-kill", final=True)
    assert starts_checkpoints(ctl, clock, sent, times=1)
    assert [a.status.status for a in final] == [common_pb2.OK]
    assert not starts_checkpoints(ctl, clock, sent, times=1)  # the kill follows: none after it
    ctl.resume()  # the kill failed and the topology was activated again
    assert starts_checkpoints(ctl, clock, sent)


def test_a_final_savepoint_still_waiting_when_the_topology_is_activated_stops_nothing(
        tmp_path, monkeypatch):
    """`heron kill --savepoint` gave up waiting and reactivated the topology: the savepoint
    it asked for is written later as a plain one, and checkpoints go on."""
    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    clock.now += 1.0
    ctl.tick()  # a checkpoint is in flight: the savepoint waits for it
    ask_savepoint(ctl, "before-kill", final=True)
    ctl.resume()
    ctl.in_flight = None  # that checkpoint is lost
    assert starts_checkpoints(ctl, clock, sent, times=1)
    assert written.ids == ["before-kill"]
    assert starts_checkpoints(ctl, clock, sent)


def test_heron_activate_resumes_checkpoints_stopped_by_a_final_savepoint(tmp_path, monkeypatch):
    """The Topology Master hands an activation (even of a topology still active: the kill
    that deactivated it may not have got that far) to the controller."""
    from engine.messages import tmanager_pb2, topology_pb2
    from engine.tmanager.master import TopologyMaster

    ctl, clock, sent, written = savepoint_controller(tmp_path, monkeypatch)
    ask_savepoint(ctl, "before-kill", final=True)
    assert starts_checkpoints(ctl, clock, sent, times=1) and written.ids == ["before-kill"]
    assert not starts_checkpoints(ctl, clock, sent, times=1)
    plan = physical_plan_pb2.PhysicalPlan()
    plan.topology.state = topology_pb2.PAUSED
    master = SimpleNamespace(name="wc", spec=SimpleNamespace(topology_id="wc-1"), pplan=plan,
                             topology=plan.topology, stateful=ctl, absent=set(),
                             _store_pplan=lambda: None, _broadcast=lambda: None)
    answer = TopologyMaster._set_state(master, tmanager_pb2.TopologyActivateRequest(
        topology_name="wc", topology_id="wc-1"))
    assert answer.status.status == common_pb2.OK
    assert starts_checkpoints(ctl, clock, sent)
