"""Fixtures for the shell bridge tests: a recording collector, component
directories with hand-written protocol scripts and pystorm modules, and a
``start`` factory whose hosts are always closed, even when a test fails."""
from __future__ import annotations

import logging
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.common.multilang import host_shell_component

SOURCE_FIELDS = {"src": {"default": ["line"]}}


class RecordingCollector:
    """Records every collector call, and the thread it was made on."""

    def __init__(self, task_ids: list[int] | None = None) -> None:
        self.calls: list[tuple] = []
        self.threads: set[int] = set()
        self.task_ids = [7, 8] if task_ids is None else task_ids
        self.refuse: Exception | None = None

    def _record(self, *call: Any) -> None:
        self.threads.add(threading.get_ident())
        self.calls.append(call)

    def emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id):
        self._record("emit", list(values), stream, anchors, direct_task, need_task_ids, tup_id)
        if self.refuse is not None:
            raise self.refuse
        return list(self.task_ids) if need_task_ids else None

    def ack(self, tup_id):
        self._record("ack", tup_id)

    def fail(self, tup_id):
        self._record("fail", tup_id)

    def log(self, msg, level):
        self._record("log", msg, level)

    def error(self, msg):
        self._record("error", msg)

    def metric(self, name, value):
        self._record("metric", name, value)

    def sync(self):
        self._record("sync")

    def of(self, kind: str) -> list[tuple]:
        return [c[1:] for c in self.calls if c[0] == kind]

    def emits(self) -> list[tuple]:
        """(values, stream, anchors, direct_task, need_task_ids, tup_id) of each emit."""
        return self.of("emit")

    def logs(self) -> list[tuple[str, int]]:
        return self.of("log")


def storm_context(component: str = "comp", task: int = 3) -> dict:
    return {
        "taskid": task,
        "componentid": component,
        "task->component": {str(task): component, "1": "src"},
        "streams": ["default"],
        "stream->outputfields": {"default": ["word"]},
        "source->stream->fields": SOURCE_FIELDS,
    }


def _wait_until(
    condition: Callable[[], Any],
    timeout: float = 10.0,
    poll: Callable[[], None] | None = None,
    interval: float = 0.02,
) -> Any:
    """Poll ``condition`` (calling ``poll`` first each time) until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        if poll is not None:
            poll()
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)


_PROTOCOL_PRELUDE = r"""
# Speaks Storm's multi-lang JSON protocol by hand.
read_msg() {  # reads lines up to "end" into MSG; fails at EOF
  MSG=""
  while IFS= read -r line; do
    [[ "$line" == "end" ]] && return 0
    MSG+="$line"
  done
  return 1
}
send() { printf '%s\nend\n' "$1"; }
handshake() {
  read_msg || exit 2
  [[ $MSG =~ \"pidDir\":\"([^\"]*)\" ]] && touch "${BASH_REMATCH[1]}/$$"
  send "{\"pid\": $$}"
}
"""

SCRIPTS = {
    # A bolt: answers heartbeats, emits (value, "seen") anchored to each
    # input with need_task_ids absent, logs the task ids it got, acks.
    "bolt.sh": r"""
handshake
send '{"command": "log", "msg": "bash bolt ready", "level": 1}'
while read_msg; do
  if [[ $MSG =~ \"stream\":\"__heartbeat\" ]]; then send '{"command": "sync"}'; continue; fi
  [[ $MSG =~ \"id\":\"([^\"]*)\" ]]; id=${BASH_REMATCH[1]}
  [[ $MSG =~ \"comp\":\"([^\"]*)\" ]]; comp=${BASH_REMATCH[1]}
  [[ $MSG =~ \"tuple\":\[([^]]*)\] ]]; vals=${BASH_REMATCH[1]}
  send "{\"command\": \"emit\", \"anchors\": \"$id\", \"tuple\": [$vals, \"$comp\"]}"
  read_msg || exit 2
  send "{\"command\": \"log\", \"msg\": \"task ids $MSG\", \"level\": 3}"
  send "{\"command\": \"ack\", \"id\": \"$id\"}"
done
exit 0
""",
    # A spout: each next emits [n] with id "m<n>" (need_task_ids absent),
    # logs the task ids; every command gets a log line and a sync.
    "spout.sh": r"""
handshake
n=0
while read_msg; do
  [[ $MSG =~ \"command\":\"([a-z]*)\" ]]; cmd=${BASH_REMATCH[1]}
  case $cmd in
    next)
      n=$((n+1))
      send "{\"command\":\"emit\",\"tuple\":[$n],\"id\":\"m$n\"}"
      read_msg || exit 2
      send "{\"command\":\"log\",\"msg\":\"ids $MSG\"}" ;;
    ack|fail)
      [[ $MSG =~ \"id\":\"([^\"]*)\" ]]
      send "{\"command\":\"log\",\"msg\":\"$cmd ${BASH_REMATCH[1]}\",\"level\":2}" ;;
    *) send "{\"command\":\"log\",\"msg\":\"$cmd\",\"level\":2}" ;;
  esac
  send '{"command":"sync"}'
done
""",
    # Reports every message it receives (handshake included) as a log line.
    "echo.sh": r"""
handshake
send "{\"command\": \"log\", \"msg\": \"${MSG//\"/\\\"}\"}"
while read_msg; do
  send "{\"command\": \"log\", \"msg\": \"${MSG//\"/\\\"}\"}"
done
""",
    # Dies on its first tuple, explaining why on stderr.
    "crash.sh": r"""
handshake
read_msg
echo "about to fail" >&2
echo "boom: disk on fire" >&2
exit 3
""",
    # A spout that answers one command, then exits explaining why on stderr.
    "quitter.sh": r"""
handshake
read_msg
send '{"command": "sync"}'
echo "no more input files" >&2
exit 4
""",
    # Handshakes, then never reads or writes again.
    "hang.sh": r"""
handshake
sleep 60
""",
    # Ignores stdin EOF and SIGTERM; only SIGKILL stops it.
    "stubborn.sh": r"""
trap '' TERM
handshake
exec 0</dev/null
while true; do sleep 0.05; done
""",
    # Handshakes, then prints to stdout as a careless component would.
    "printer.sh": r"""
handshake
read_msg
echo "debugging: got a tuple"
send '{"command": "sync"}'
sleep 60
""",
    # Answers the handshake without creating its pid file.
    "nopidfile.sh": r"""
read_msg || exit 2
send "{\"pid\": $$}"
sleep 60
""",
    # A spout that sends a command a spout may not send.
    "badspout.sh": r"""
handshake
read_msg
send '{"command": "ack", "id": "x"}'
sleep 60
""",
}

PYSTORM_MODULES = {
    "bolts.py": '''
import time
from streamparse import Bolt

class SplitBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        for word in tup.values.line.split():
            self.emit([word])


class TaskIdsBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        ids = self.emit([tup.values.line], need_task_ids=True)
        self.emit([repr(ids)], stream="ids")


class PickyBolt(Bolt):
    """Fails inputs it does not like, logs at every level, reports a metric."""
    outputs = ["word"]
    auto_ack = False

    def process(self, tup):
        self.log("trace me", level="trace")
        self.log("careful", level="warning")
        self.report_metric("seen", 1)
        if tup.values.line == "bad":
            self.fail(tup)
        else:
            self.emit([tup.values.line], anchors=[tup])
            self.ack(tup)


class TickBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        self.emit([tup.values.line])

    def process_tick(self, tup):
        self.emit(["tick %s" % (tup.values[0],)])


class CrashBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        raise ValueError("cannot handle %s" % (tup.values.line,))


class SleepyBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        time.sleep(60)
''',
    "spouts.py": '''
from streamparse import Spout

class CountSpout(Spout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.n = 0

    def next_tuple(self):
        self.n += 1
        self.emit([self.n], tup_id="id%d" % self.n)
        if self.n == 2:
            ids = self.emit(["direct"], direct_task=5, need_task_ids=True)
            self.log("direct ids %r" % (ids,))

    def ack(self, tup_id):
        self.log("acked %s" % tup_id)

    def fail(self, tup_id):
        self.log("failed %s" % tup_id, level="warning")

    def activate(self):
        self.log("activated")

    def deactivate(self):
        self.log("deactivated")


class SleepySpout(Spout):
    outputs = ["n"]

    def next_tuple(self):
        import time
        time.sleep(60)
''',
    "ours.py": '''
from compat.storm_api.bolt import Bolt
from compat.storm_api.spout import Spout

class UpperBolt(Bolt):
    outputs = ["word"]

    def process(self, tup):
        self.emit([tup.values.line.upper()])


class OneSpout(Spout):
    outputs = ["n"]

    def next_tuple(self):
        self.emit([1], tup_id="one")
''',
    "broken.py": '''
import no_such_module_anywhere
''',
}


@pytest.fixture(scope="session")
def components(tmp_path_factory) -> Path:
    """A directory holding the protocol scripts and pystorm modules above."""
    root = tmp_path_factory.mktemp("components")
    for name, body in SCRIPTS.items():
        (root / name).write_text(
            "#!/usr/bin/env bash\n" + _PROTOCOL_PRELUDE + textwrap.dedent(body)
        )
    for name, body in PYSTORM_MODULES.items():
        (root / name).write_text(textwrap.dedent(body))
    return root


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    """wait_until(condition, timeout=10, poll=None): poll ``condition`` until truthy."""
    return _wait_until


@pytest.fixture
def collector() -> RecordingCollector:
    return RecordingCollector()


@pytest.fixture
def logger() -> logging.Logger:
    return logging.getLogger("tests.multilang")


@pytest.fixture
def start(components, collector, logger):
    """start(kind, command, script, conf=None, **kw) -> host; every host is closed afterwards."""
    hosts: list[Any] = []

    def _start(kind: str, command: str, script: str | None, conf: dict | None = None, *,
               component: str = "comp", task: int = 3, **kwargs: Any):
        kwargs.setdefault("cwd", components)
        kwargs.setdefault("collector", collector)
        host = host_shell_component(
            kind,
            command,
            script,
            {"topology.name": "test", **(conf or {})},
            storm_context(component, task),
            logger=logger,
            **kwargs,
        )
        hosts.append(host)
        return host

    yield _start
    for host in hosts:
        host.close()
