"""What a user sees when something is wrong, on the real heron processes: a bolt that
cannot initialize, a component module that imports where the topology is submitted but
not on the workers, one that imports nowhere, and garbage sent to a Stream Manager's and
the Topology Master's sockets. Each is a clear error naming the component (or a dropped,
counted message), and nothing is left running."""

from __future__ import annotations

import collections
import sys

import pytest
import zmq
from click.testing import CliRunner

from engine.common.network import type_frame
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import TopologyKeys
from engine.messages import stmgr_pb2, tuple_pb2
from engine.tools.cli.main import main
from tests.e2e.heron.helpers import PROJECTS, HeronRun, leaf_tuples, wait_until

pytestmark = pytest.mark.timeout(180)

FAULTY = PROJECTS / "faulty"


def test_a_bolt_that_cannot_initialize_ends_the_run_with_an_error_naming_it(tmp_path,
                                                                           isolated_imports):
    """It is retried with backoff (never given up) and reported as crash-looping when the
    time limit ends."""
    run = HeronRun(FAULTY, "e2e_bad_init", tmp_path / "run",
                   options={"e2e.limit": 50, "heron.executor.restart.backoff.initial.ms": 50,
                            "heron.executor.restart.backoff.max.ms": 200})
    try:
        run.start()
        assert wait_until(lambda: run.metrics() and run.runner.crash_looping(), timeout=30), \
            run.log_dir
        result = run.finish(time_limit=1)
    finally:
        run.close()
    assert result.reason == "error", (result.reason, result.log_dir)
    assert "crash-looping" in result.error and "refuses_to_start" in result.error
    assert "e2e: refuses_to_start cannot initialize" in result.error
    assert run.alive() == []


def test_a_module_missing_on_the_workers_is_reported_with_the_component(tmp_path,
                                                                        isolated_imports):
    run = HeronRun(FAULTY, "e2e_worker_import", tmp_path / "run", options={"e2e.limit": 50})
    try:
        # no physical plan ever forms (the instances cannot start): run without waiting for one
        result = run.finish(time_limit=90)
    finally:
        run.close()
    assert result.reason == "error", (result.reason, result.log_dir)
    assert "worker_only" in result.error
    assert "cannot load the topology" in result.error
    assert "not installed on the workers" in result.error
    assert run.alive() == []


def test_a_component_module_that_does_not_import_is_a_clear_cli_error(tmp_path,
                                                                      isolated_imports):
    result = CliRunner().invoke(main, ["run", str(FAULTY), "-n", "e2e_broken_import",
                                       "--time", "5", "--log-dir", str(tmp_path / "logs")])
    assert result.exit_code == 2, result.output
    assert "e2e_heron_no_such_dependency" in result.output
    assert "e2e_heron_broken.py" in result.output  # the file that failed to import
    assert "Traceback" not in result.output


def send_garbage(endpoint: str, messages: list[list[bytes]], security) -> None:
    """Malformed frames from a peer that holds the topology's keys (a buggy process of
    the topology itself): outsiders never get a frame in (test_untrusted_peers.py)."""
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    sock.setsockopt(zmq.IDENTITY, b"e2e-garbage")
    security.client(sock)
    try:
        sock.connect(endpoint)
        for frames in messages:
            sock.send_multipart(frames)
    finally:
        sock.close()


def test_malformed_messages_are_dropped_and_the_topology_keeps_its_results(tmp_path,
                                                                          isolated_imports):
    limit, keys = 400, 7
    gate = tmp_path / "gate"
    run = HeronRun(FAULTY, "e2e_gated", tmp_path / "run",
                   options={"e2e.limit": limit, "e2e.keys": keys, "e2e.gate": str(gate)})
    try:
        run.start()
        stmgrs = list(run.pplan.stmgrs)
        assert len(stmgrs) == 2
        security = SocketSecurity(TopologyKeys.load(run.working_dir))
        key_count_task = run.placement.tasks["key_count"][0]
        stream_message = type_frame(stmgr_pb2.TupleStreamMessage)
        # a peer that speaks nonsense, a truncated protobuf, and a well-formed envelope
        # whose tuple batch (forwarded undecoded to the bolt's instance) is corrupt
        corrupt_batch = stmgr_pb2.TupleStreamMessage(
            task_id=key_count_task, src_task_id=1, num_tuples=1,
            data=b"\x0a\xff\xff\xff\xff\x0f junk").SerializeToString()
        corrupt_tuple = tuple_pb2.TupleBatch(src_task_id=1)
        corrupt_tuple.stream.component_name = "numbers"
        corrupt_tuple.stream.id = "default"
        corrupt_tuple.values.append(b"\x93not a serialized tuple")
        bad_values = stmgr_pb2.TupleStreamMessage(
            task_id=key_count_task, src_task_id=1, num_tuples=1,
            data=corrupt_tuple.SerializeToString()).SerializeToString()
        for stmgr in stmgrs:
            send_garbage(stmgr.data_endpoint, [
                [b"only one frame"],
                [b"no.such.Type", b"payload"],
                [stream_message, b"\xff\xff\xff truncated"],
                [stream_message, corrupt_batch],
                [stream_message, bad_values],
            ], security)
        location = run.location
        for endpoint in (location.server_endpoint, location.controller_endpoint):
            send_garbage(endpoint, [[b"x"], [b"heron.proto.tmanager.NoSuch", b"\x00"],
                                    [b"heron.proto.tmanager.MetricRequest", b"\xff\xff"]],
                          security)

        def malformed_counted() -> int:
            return sum(int(v.get("__malformed-messages", 0)) for v in run.metrics().values())
        assert wait_until(lambda: malformed_counted() >= 2 * 3, timeout=30), run.metrics()
        gate.write_text("open")
        result = run.finish(time_limit=90)
    finally:
        run.close()
    assert result.reason == "finished", (result.error, result.log_dir)
    rows = leaf_tuples(result, "key_count")
    final = {}
    for key, count in rows:
        final[key] = max(final.get(key, 0), count)
    expected = collections.Counter(f"k{i % keys}" for i in range(limit))
    assert final == dict(expected)
    assert len(rows) == limit  # the corrupt batch and values added nothing
    assert run.alive() == []
    logs = "".join(p.read_text() for p in run.log_dir.glob("container_*key_count*.log"))
    assert "does not decode" in logs


@pytest.mark.skipif(sys.platform != "linux", reason="process checks use /proc via psutil")
def test_deactivate_stops_the_spouts_and_activate_resumes_them(tmp_path, isolated_imports):
    from engine.messages import common_pb2, tmanager_pb2, topology_pb2

    run = HeronRun(FAULTY, "e2e_endless", tmp_path / "run")
    try:
        run.start()
        assert wait_until(lambda: run.emitted("endless") > 100, timeout=30)
        name, tid = run.runner.spec.topology_name, run.runner.spec.topology_id
        response = run.runner._control(tmanager_pb2.TopologyDeactivateRequest(
            topology_name=name, topology_id=tid))
        assert response.status.status == common_pb2.OK
        # once deactivated, the count settles: two metric intervals with no change
        settled = []

        def unchanged() -> bool:
            settled.append(run.emitted("endless"))
            return len(settled) >= 3 and settled[-1] == settled[-3]
        assert wait_until(unchanged, timeout=20, interval=1.0), settled
        paused_at = settled[-1]
        assert run.state.get("pplans", name).topology.state == topology_pb2.PAUSED
        response = run.runner._control(tmanager_pb2.TopologyActivateRequest(
            topology_name=name, topology_id=tid))
        assert response.status.status == common_pb2.OK
        assert wait_until(lambda: run.emitted("endless") > paused_at + 100, timeout=30)
        assert run.state.get("pplans", name).topology.state == topology_pb2.RUNNING
    finally:
        run.close()
    assert run.alive() == []
