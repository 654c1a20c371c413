"""Components started as real processes, as Storm starts shell components.

pystorm's TicklessBatchingBolt interrupts its main thread with SIGUSR1 and
exits with ``os._exit``, so it can only be compared in a process of its own;
the same processes exercise ``python -m compat.storm_api.run`` against
streamparse's ``streamparse_run``.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from tests.compat.storm_api.storm_api_wire import decode, encode, handshake, normalize, tick, tup

pytestmark = pytest.mark.slow

MODULE = textwrap.dedent('''
    import pystorm
    from compat.storm_api import bolt


    class Body:
        secs_between_batches = 0.3

        def group_key(self, tup):
            return tup.values[0][0]

        def process_batch(self, key, tups):
            if key == "x":
                raise ValueError("bad batch")
            self.emit([key, len(tups)])


    class TheirTickless(Body, pystorm.TicklessBatchingBolt):
        pass


    class OurTickless(Body, bolt.TicklessBatchingBolt):
        pass


    class SplitBody:
        def process(self, tup):
            for word in tup.values.sentence.split():
                self.emit([word])


    class TheirSplit(SplitBody, pystorm.Bolt):
        pass


    class OurSplit(SplitBody, bolt.Bolt):
        pass
''')


def run_process(
    runner: str, args: list[str], cwd, messages: list, serializer: str, linger: float
) -> tuple[list, int]:
    """Start a component process, feed it, keep stdin open ``linger`` seconds."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", runner, *args],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
        )
        try:
            proc.stdin.write(encode(messages, serializer))
            proc.stdin.flush()
            time.sleep(linger)
            proc.stdin.close()
            out = proc.stdout.read()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        err.seek(0)
        assert out, err.read().decode()
    return decode(out, serializer), proc.returncode


def both(cwd, args_theirs, args_ours, messages, serializer="json", linger=1.5):
    theirs = run_process("streamparse.run", args_theirs, cwd, messages, serializer, linger)
    ours = run_process("compat.storm_api.run", args_ours, cwd, messages, serializer, linger)
    assert normalize(ours[0]) == normalize(theirs[0])
    assert ours[1] == theirs[1]
    return ours


@pytest.fixture
def project(tmp_path):
    (tmp_path / "tickless_mod.py").write_text(MODULE)
    return tmp_path


def test_tickless_batching_bolt_processes_batches_on_its_timer_like_pystorm(project):
    messages = [handshake(project), tup("-1", ["apple"]), tup("-2", ["banana"]), tick("-3")]
    out, code = both(
        project, ["tickless_mod.TheirTickless"], ["tickless_mod.OurTickless"], messages
    )
    assert code == 2
    assert [m["tuple"] for m in out if m.get("command") == "emit"] == [["a", 1], ["b", 1]]
    assert [m["id"] for m in out if m.get("command") == "ack"] == ["-3", "-1", "-2"]


def test_tickless_batcher_failure_reports_fails_and_exits_1_like_pystorm(project):
    messages = [handshake(project), tup("-1", ["apple"]), tup("-2", ["xylophone"])]
    out, code = both(
        project, ["tickless_mod.TheirTickless"], ["tickless_mod.OurTickless"], messages
    )
    assert code == 1
    assert [m.get("command") for m in out][-4:] == ["log", "error", "sync", "fail"]
    assert out[-1] == {"command": "fail", "id": "-2"}


def test_run_resplits_a_single_argument_and_imports_from_resources(tmp_path):
    resources = tmp_path / "resources"
    resources.mkdir()
    (resources / "res_mod.py").write_text(MODULE)
    messages = [handshake(tmp_path), tup("-1", ["x y"])]
    out, code = both(
        tmp_path,
        ["-s msgpack res_mod.TheirSplit"],
        ["-s msgpack res_mod.OurSplit"],
        messages,
        serializer="msgpack",
        linger=0,
    )
    assert code == 2
    assert [m["tuple"] for m in out if m.get("command") == "emit"] == [["x"], ["y"]]
