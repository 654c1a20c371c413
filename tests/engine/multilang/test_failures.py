"""Every way a shell task can break ends as one ``ComponentFailure`` that
says what happened: exit code and stderr tail, heartbeat timeout, garbage
on stdout, a refused message, or a process that never got going."""
from __future__ import annotations

import time

import pytest

from compat.storm_api.exceptions import ComponentFailure
from engine.common.multilang import (
    HeartbeatTimeout,
    ShellProtocolError,
    ShellStartError,
    SubprocessDied,
)


def poll_until_failure(host, timeout: float = 10.0) -> ComponentFailure:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            host.poll()
        except ComponentFailure as failure:
            return failure
        time.sleep(0.05)
    raise AssertionError("the host never failed")


@pytest.mark.timeout(30)
def test_crash_reports_exit_code_and_stderr_tail(start):
    host = start("bolt", "bash", "crash.sh", component="crashy", task=7)
    host.execute(host.make_tuple("1", "src", "default", 1, ["x"]))
    failure = poll_until_failure(host)
    assert isinstance(failure.original, SubprocessDied)
    first_line = str(failure).splitlines()[0]
    assert "'crashy' task 7" in first_line and "exited with code 3" in first_line
    assert "boom: disk on fire" in first_line
    assert "about to fail" in failure.traceback_text


@pytest.mark.timeout(30)
def test_failure_is_sticky_until_the_host_is_closed(start):
    host = start("bolt", "bash", "crash.sh")
    host.execute(host.make_tuple("1", "src", "default", 1, ["x"]))
    failure = poll_until_failure(host)
    with pytest.raises(ComponentFailure) as again:
        host.execute(host.make_tuple("2", "src", "default", 1, ["y"]))
    assert again.value is failure


@pytest.mark.timeout(30)
def test_pystorm_bolt_that_raises_reports_and_fails_before_the_exit(start, collector):
    host = start("bolt", "streamparse_run", "bolts.CrashBolt")
    host.execute(host.make_tuple("9", "src", "default", 1, ["bad input"]))
    failure = poll_until_failure(host)
    # What pystorm sent on its way out reached the collector first.
    assert collector.of("fail") == [("9",)]
    assert "cannot handle bad input" in collector.of("error")[0][0]
    assert "exited with code 1" in str(failure)


@pytest.mark.timeout(30)
def test_silent_bolt_fails_with_heartbeat_timeout(start):
    host = start(
        "bolt", "bash", "hang.sh", {"topology.subprocess.timeout.secs": 1}, component="slow", task=2
    )
    began = time.monotonic()
    failure = poll_until_failure(host)
    assert 1.0 <= time.monotonic() - began < 10.0  # not before the timeout, nor long after
    assert isinstance(failure.original, HeartbeatTimeout)
    message = str(failure)
    assert "subprocess heartbeat timeout" in message and "'slow' task 2" in message
    assert f"pid {host.pid}" in message


@pytest.mark.timeout(30)
def test_bolt_busy_in_user_code_fails_with_heartbeat_timeout(start):
    # (3 s: the handshake has the same deadline, and a loaded machine can take more than
    # a second to start Python and import streamparse)
    host = start(
        "bolt", "streamparse_run", "bolts.SleepyBolt", {"topology.subprocess.timeout.secs": 3}
    )
    host.execute(host.make_tuple("1", "src", "default", 1, ["zzz"]))
    assert isinstance(poll_until_failure(host).original, HeartbeatTimeout)


@pytest.mark.timeout(30)
def test_blocked_execute_still_notices_a_process_that_stopped_reading(start):
    host = start("bolt", "bash", "hang.sh",
                 {"topology.subprocess.timeout.secs": 1.5, "topology.shellbolt.max.pending": 1})
    big = "x" * 100_000  # more than a pipe buffer
    began = time.monotonic()
    with pytest.raises(ComponentFailure) as failure:
        for i in range(10):
            host.execute(host.make_tuple(str(i), "src", "default", 1, [big]))
    assert isinstance(failure.value.original, HeartbeatTimeout)
    # noticed within a few timeouts, not after the bolt's 60 s sleep (a generous bound:
    # a loaded machine is slow, not wrong)
    assert time.monotonic() - began < 20.0


@pytest.mark.timeout(30)
def test_spout_that_does_not_answer_fails_with_heartbeat_timeout(start):
    host = start(
        "spout", "streamparse_run", "spouts.SleepySpout", {"topology.subprocess.timeout.secs": 3}
    )
    with pytest.raises(ComponentFailure, match="subprocess heartbeat timeout") as failure:
        host.next_tuple()
    assert "'next'" in str(failure.value)


@pytest.mark.timeout(30)
def test_spout_that_exited_between_commands_reports_its_exit(start):
    host = start("spout", "bash", "quitter.sh")
    host.next_tuple()
    time.sleep(0.3)  # it is gone before the next command is written
    with pytest.raises(
        ComponentFailure, match="exited with code 4; stderr ends: no more input files"
    ) as failure:
        host.next_tuple()
    assert isinstance(failure.value.original, SubprocessDied)


@pytest.mark.timeout(30)
def test_wake_that_raises_does_not_stop_the_bridge(start, collector, wait_until):
    def wake():
        raise RuntimeError("engine bug")

    host = start("bolt", "bash", "bolt.sh", wake=wake)
    host.execute(host.make_tuple("1", "src", "default", 1, ["x"]))
    wait_until(lambda: collector.of("ack"), poll=host.poll)


@pytest.mark.timeout(30)
def test_spout_sending_a_bolt_command_fails_naming_it(start):
    host = start("spout", "bash", "badspout.sh")
    with pytest.raises(ComponentFailure, match="Unknown command received: 'ack'") as failure:
        host.next_tuple()
    assert isinstance(failure.value.original, ShellProtocolError)


@pytest.mark.timeout(30)
def test_print_to_stdout_is_reported_as_protocol_corruption(start):
    host = start("bolt", "bash", "printer.sh")
    host.execute(host.make_tuple("1", "src", "default", 1, ["x"]))
    failure = poll_until_failure(host)
    assert isinstance(failure.original, ShellProtocolError)
    assert "print()" in str(failure.original) and "debugging: got a tuple" in str(failure.original)


@pytest.mark.timeout(30)
def test_message_the_collector_refuses_fails_the_task(start, collector):
    collector.refuse = RuntimeError("stream 'default' is not declared")
    host = start("bolt", "streamparse_run", "bolts.SplitBolt")
    host.execute(host.make_tuple("1", "src", "default", 1, ["a"]))
    failure = poll_until_failure(host)
    assert isinstance(failure.original, RuntimeError)
    assert "not declared" in str(failure)


@pytest.mark.timeout(30)
def test_value_the_serializer_cannot_carry_fails_naming_stream_and_source(start):
    host = start("bolt", "bash", "bolt.sh")
    with pytest.raises(ComponentFailure, match="from 'src' on stream 'default'.*json"):
        host.execute(host.make_tuple("1", "src", "default", 1, [b"bytes are not JSON"]))


@pytest.mark.timeout(30)
def test_component_that_dies_while_starting_fails_with_its_stderr(start):
    with pytest.raises(ComponentFailure) as failure:
        start("bolt", "streamparse_run", "broken.Nothing", component="broken", task=5)
    assert isinstance(failure.value.original, SubprocessDied)
    assert "'broken' task 5" in str(failure.value) and "exited with code 1" in str(failure.value)
    assert "No module named 'no_such_module_anywhere'" in str(failure.value)


@pytest.mark.timeout(30)
def test_missing_command_fails_to_start(start):
    with pytest.raises(ComponentFailure, match="cannot start") as failure:
        start("bolt", "no-such-command-here", "x")
    assert isinstance(failure.value.original, ShellStartError)


@pytest.mark.timeout(30)
def test_handshake_without_pid_file_is_refused(start):
    with pytest.raises(ComponentFailure, match="created no pid file"):
        start("bolt", "bash", "nopidfile.sh")


@pytest.mark.timeout(30)
def test_handshake_must_be_answered_within_the_timeout(start):
    with pytest.raises(ComponentFailure, match="did not answer the handshake within 1 s"):
        start("bolt", "sleep", "30", {"topology.subprocess.timeout.secs": 1})


def test_unknown_kind_or_serializer_is_a_programming_error(start):
    with pytest.raises(ValueError, match="kind"):
        start("sprout", "bash", "bolt.sh")
    with pytest.raises(ValueError, match="serializer"):
        start("bolt", "bash", "bolt.sh", serializer="pickle")
