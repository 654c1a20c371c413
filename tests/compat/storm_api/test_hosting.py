"""In-process hosting of our components and of unchanged pystorm/streamparse ones."""
from __future__ import annotations

import io
import logging
import pickle
import signal
import sys
import threading
import time

import pystorm
import pytest
import streamparse

from compat.storm_api import bolt as our_bolt
from compat.storm_api import spout as our_spout
from compat.storm_api.exceptions import ComponentFailure, StormWentAwayError
from compat.storm_api.hosting import HostedBolt, HostedSpout, host_component
from tests.compat.storm_api.storm_api_wire import BOLT_CONTEXT, SPOUT_CONTEXT

FLAVOURS = {
    "ours": (our_bolt, our_spout),
    "pystorm": (pystorm, pystorm),
    "streamparse": (streamparse, streamparse),
}
CONF = {"topology.name": "hosted"}


def base(flavour: str, name: str) -> type:
    bolts, spouts = FLAVOURS[flavour]
    return getattr(bolts, name, None) or getattr(spouts, name)


class Calls:
    def __init__(self, task_ids=(21,)):
        self.calls = []
        self.task_ids = list(task_ids)

    def emit(self, values, stream, anchors, direct_task, need_task_ids, tup_id):
        self.calls.append(
            ("emit", list(values), stream, anchors, direct_task, need_task_ids, tup_id)
        )
        return self.task_ids if need_task_ids and direct_task is None else None

    def __getattr__(self, name):
        if name in ("ack", "fail", "log", "error", "metric", "sync"):
            return lambda *args: self.calls.append((name, *args))
        raise AttributeError(name)

    def names(self):
        return [call[0] for call in self.calls]


class SplitBody:
    def initialize(self, conf, ctx):
        self.initialized_with = (conf, ctx)

    def process(self, tup):
        if tup.values.sentence == "boom":
            raise ValueError("boom\nsecond line")
        if tup.values.sentence == "ids":
            self.emit([repr(self.emit(["x"], need_task_ids=True))])
            return
        for word in tup.values.sentence.split():
            self.emit([word])
        self.log("split done", "debug")
        self.report_metric("words", 2)


def host_bolt(flavour, body=SplitBody, name="Bolt", calls=None, logger=None, attrs=None):
    cls = type(body.__name__, (body, base(flavour, name)), dict(attrs or {}))
    calls = calls if calls is not None else Calls()
    hosted = host_component(
        cls, CONF, BOLT_CONTEXT, calls, logger or logging.getLogger("test.hosting")
    )
    return hosted, calls


@pytest.fixture(params=list(FLAVOURS))
def flavour(request):
    return request.param


def test_hosted_bolt_processes_tuples_through_the_collector(flavour):
    hosted, calls = host_bolt(flavour)
    assert isinstance(hosted, HostedBolt)
    assert hosted.component.initialized_with == (CONF, BOLT_CONTEXT)
    tup = hosted.make_tuple("7", "sentence-spout", "default", 1, ["a b"])
    assert type(tup.values).__name__ == "Sentence_SpoutDefaultTuple"
    hosted.execute(tup)
    hosted.execute(hosted.make_tuple("8", None, "__heartbeat", -1, []))
    hosted.execute(hosted.make_tuple("9", "__system", "__tick", -1, [1]))
    assert calls.calls == [
        ("emit", ["a"], None, ["7"], None, False, None),
        ("emit", ["b"], None, ["7"], None, False, None),
        ("log", "split done", 1),
        ("metric", "words", 2),
        ("ack", "7"),
        ("sync",),
        ("ack", "9"),
    ]


def test_need_task_ids_are_answered_by_the_collector(flavour):
    hosted, calls = host_bolt(flavour, calls=Calls(task_ids=[4, 5]))
    hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["ids"]))
    assert calls.calls[1][1] == ["[4, 5]"]


def test_hosting_adds_no_root_handlers_and_leaves_stdout_alone(flavour):
    root_handlers = list(logging.getLogger().handlers)
    stdout = sys.stdout
    hosted, _ = host_bolt(flavour)
    hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["a"]))
    assert logging.getLogger().handlers == root_handlers
    assert sys.stdout is stdout


def test_component_logs_go_to_the_logger_the_engine_passed(flavour):
    logger = logging.getLogger("engine.task.3")
    hosted, _ = host_bolt(flavour, logger=logger)
    assert hosted.component.logger is logger


def test_hosting_works_from_a_thread_that_is_not_main(flavour):
    results = []

    def work():
        try:
            for name in ("Bolt", "TicklessBatchingBolt"):
                hosted, calls = host_bolt(
                    flavour, body=BatchBody if "Batch" in name else SplitBody, name=name
                )
                hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["a"]))
                hosted.close()
                results.append(calls.names())
        except BaseException as exc:  # reported by the assertion below
            results.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert results == [["emit", "log", "metric", "ack"], []]


def test_exception_reports_error_and_fails_then_raises_component_failure(flavour):
    hosted, calls = host_bolt(flavour)
    with pytest.raises(ComponentFailure) as failure:
        hosted.execute(hosted.make_tuple("13", "sentence-spout", "default", 1, ["boom"]))
    assert calls.names() == ["error", "sync", "fail"]
    assert calls.calls[0][1].startswith(
        "Python ValueError raised while processing Tuple Tuple(id='13'"
    )
    assert calls.calls[-1] == ("fail", "13")
    error = failure.value
    assert str(error) == "component 'split-bolt' task 3 failed: ValueError: boom"
    assert isinstance(error.original, ValueError) and error.__cause__ is error.original
    assert "raise ValueError" in error.traceback_text


def test_exit_on_exception_false_keeps_the_component_running(flavour):
    hosted, calls = host_bolt(flavour, attrs={"exit_on_exception": False})
    hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["boom"]))
    hosted.execute(hosted.make_tuple("2", "sentence-spout", "default", 1, ["ok"]))
    assert calls.names() == ["error", "sync", "fail", "emit", "log", "metric", "ack"]


def test_collector_saying_storm_went_away_propagates_unchanged(flavour):
    class Gone(Calls):
        def emit(self, *args):
            raise StormWentAwayError()

    hosted, _ = host_bolt(flavour, calls=Gone())
    with pytest.raises(StormWentAwayError):
        hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["a"]))


class FailingInit:
    def initialize(self, conf, ctx):
        raise RuntimeError("no database")

    def process(self, tup):
        pass


def test_initialize_failure_is_a_component_failure_without_messages(flavour):
    with pytest.raises(
        ComponentFailure, match="'split-bolt' task 3 failed: RuntimeError: no database"
    ):
        host_bolt(flavour, body=FailingInit, calls=(calls := Calls()))
    assert calls.calls == []


def test_classes_that_are_not_spouts_or_bolts_are_rejected():
    with pytest.raises(TypeError, match="neither a spout nor a bolt"):
        host_component(pystorm.Component, CONF, BOLT_CONTEXT, Calls(), logging.getLogger("x"))
    with pytest.raises(TypeError):
        host_component(dict, CONF, BOLT_CONTEXT, Calls(), logging.getLogger("x"))


def test_component_failure_survives_pickling():
    error = ComponentFailure("c", 4, KeyError("k"), "tb")
    clone = pickle.loads(pickle.dumps(error))
    assert (clone.component, clone.task_id, str(clone)) == ("c", 4, str(error))


class BatchBody:
    secs_between_batches = 0.05
    ticks_between_batches = 1

    def process_batch(self, key, tups):
        if any(t.values.sentence == "bad" for t in tups):
            raise ValueError("bad batch")
        self.emit([len(tups)])


def test_pystorm_batching_bolt_runs_its_own_tick_logic(flavour):
    hosted, calls = host_bolt(flavour, body=BatchBody, name="BatchingBolt")
    hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["a"]))
    hosted.execute(hosted.make_tuple("2", "__system", "__tick", -1, [1]))
    hosted.execute(hosted.make_tuple("3", "__system", "__tick", -1, [1]))
    assert calls.calls == [
        ("ack", "2"),
        ("ack", "3"),
        ("emit", [1], None, ["1"], None, False, None),
        ("ack", "1"),
    ]


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_tickless_bolt_batches_on_its_timer_without_signals(flavour):
    previous = signal.getsignal(signal.SIGUSR1)
    hosted, calls = host_bolt(flavour, body=BatchBody, name="TicklessBatchingBolt")
    try:
        hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["a"]))
        wait_for(lambda: ("ack", "1") in calls.calls)
        assert calls.calls[0] == ("emit", [1], None, ["1"], None, False, None)
        assert signal.getsignal(signal.SIGUSR1) is previous
    finally:
        hosted.close()
    assert not hosted.component._batcher.is_alive()


def test_tickless_batch_error_is_raised_on_the_next_execute(flavour):
    hosted, calls = host_bolt(flavour, body=BatchBody, name="TicklessBatchingBolt")
    try:
        hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["bad"]))
        wait_for(lambda: hosted.component.exc_info is not None)
        assert calls.calls == []
        with pytest.raises(ComponentFailure, match="ValueError: bad batch"):
            hosted.execute(hosted.make_tuple("2", "sentence-spout", "default", 1, ["a"]))
        assert calls.names() == ["error", "sync", "fail"] and calls.calls[-1] == ("fail", "1")
    finally:
        hosted.close()


def test_unhosted_pystorm_tickless_construction_is_unchanged():
    host_bolt("pystorm", body=BatchBody, name="TicklessBatchingBolt")[0].close()
    assert getattr(pystorm.bolt.TicklessBatchingBolt.__init__, "_compat_hosting_guard", False)
    previous = signal.getsignal(signal.SIGUSR1)
    errors = []

    def construct():
        try:
            pystorm.TicklessBatchingBolt(
                input_stream=io.BytesIO(), output_stream=io.BytesIO(), rdb_signal=None
            )
        except ValueError as exc:  # signal handlers can only be set on the main thread
            errors.append(exc)

    thread = threading.Thread(target=construct)
    thread.start()
    thread.join(5)
    assert len(errors) == 1 and signal.getsignal(signal.SIGUSR1) is previous


class WordsBody:
    def initialize(self, conf, ctx):
        self.words = ["a", "b"]

    def next_tuple(self):
        if not self.words:
            raise IndexError("drained")
        word = self.words.pop(0)
        self.emit([word], tup_id=word)

    def ack(self, tup_id):
        self.log(f"acked {tup_id}")

    def fail(self, tup_id):
        self.emit(["again"], tup_id=tup_id)

    def activate(self):
        self.log("on")

    def deactivate(self):
        self.log("off")


def host_spout(flavour, body=WordsBody, name="Spout", calls=None):
    cls = type(body.__name__, (body, base(flavour, name)), {})
    calls = calls if calls is not None else Calls()
    return host_component(cls, CONF, SPOUT_CONTEXT, calls, logging.getLogger("test.spout")), calls


def test_hosted_spout_answers_each_command_then_syncs(flavour):
    hosted, calls = host_spout(flavour)
    assert isinstance(hosted, HostedSpout)
    hosted.activate()
    hosted.next_tuple()
    hosted.ack("a")
    hosted.fail("b")
    hosted.deactivate()
    assert calls.calls == [
        ("log", "on", 2),
        ("sync",),
        ("emit", ["a"], None, None, None, False, "a"),
        ("sync",),
        ("log", "acked a", 2),
        ("sync",),
        ("emit", ["again"], None, None, None, False, "b"),
        ("sync",),
        ("log", "off", 2),
        ("sync",),
    ]


def test_spout_exception_reports_error_then_raises_component_failure(flavour):
    hosted, calls = host_spout(flavour)
    hosted.next_tuple()
    hosted.next_tuple()
    calls.calls.clear()
    with pytest.raises(
        ComponentFailure, match="'sentence-spout' task 1 failed: IndexError: drained"
    ):
        hosted.next_tuple()
    assert calls.names() == ["error", "sync"]
    assert calls.calls[0][1].startswith("Python IndexError raised\n")


class SyncsNothing(Calls):
    syncs_nothing = True


def test_direct_hooks_are_the_spout_commands_without_the_sync_they_may_skip(flavour):
    hosted, calls = host_spout(flavour, calls=SyncsNothing())
    direct = hosted.direct_hooks()
    if flavour != "ours":  # pystorm spouts answer through their own _run()
        assert direct is None
        return
    expected_hosted, expected = host_spout(flavour, calls=SyncsNothing())
    direct.next_tuple()
    direct.next_tuple()
    direct.ack("a")
    direct.fail("b")
    expected_hosted.next_tuple()
    expected_hosted.next_tuple()
    expected_hosted.ack("a")
    expected_hosted.fail("b")
    assert calls.calls == [call for call in expected.calls if call != ("sync",)]
    calls.calls.clear()
    with pytest.raises(IndexError) as raised:
        direct.next_tuple()
    with pytest.raises(
        ComponentFailure, match="'sentence-spout' task 1 failed: IndexError: drained"
    ):
        direct.on_error(raised.value)
    assert calls.names() == ["error", "sync"]  # the component's own report, as next_tuple() makes


def test_direct_hooks_are_refused_when_the_collector_must_see_each_sync(flavour):
    hosted, _ = host_spout(flavour)
    assert hosted.direct_hooks() is None


class FiniteBody(WordsBody):
    def is_exhausted(self):
        return not self.words


def test_is_exhausted_is_read_from_the_spout_when_it_has_one(flavour):
    hosted, _ = host_spout(flavour, body=FiniteBody)
    assert hosted.is_exhausted() is False
    hosted.next_tuple()
    hosted.next_tuple()
    assert hosted.is_exhausted() is True
    assert host_spout(flavour)[0].is_exhausted() is False


def test_traceback_is_left_to_the_engine_unless_the_component_keeps_running(flavour, caplog):
    logger = logging.getLogger("test.hosting.tracebacks")
    hosted, _ = host_bolt(flavour, logger=logger)
    with caplog.at_level(logging.ERROR, logger=logger.name), pytest.raises(ComponentFailure):
        hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["boom"]))
    assert caplog.records == []
    hosted, _ = host_bolt(flavour, logger=logger, attrs={"exit_on_exception": False})
    with caplog.at_level(logging.ERROR, logger=logger.name):
        hosted.execute(hosted.make_tuple("1", "sentence-spout", "default", 1, ["boom"]))
    assert len(caplog.records) == 1 and "ValueError: boom" in caplog.records[0].getMessage()


# -- tuple_runner: what an engine's batch loop calls once per tuple ------------------------

class AckByHand:
    auto_ack = False

    def process(self, tup):
        self.emit([tup.values[0].upper()])
        if tup.values[0] != "keep":
            self.ack(tup)


class OwnAck(SplitBody):
    def ack(self, tup):
        self.emit(["own-ack"])
        super().ack(tup)


class OwnProcessTuple(SplitBody):
    def _process_tuple(self, tup):
        self.emit(["before"])
        super()._process_tuple(tup)


RUNNER_ROWS = [("1", ["a b"]), ("2", ["boom"]), ("3", ["keep"]), ("4", ["x", "too many"]),
               ("5", ["c"])]


def _without_engine_frames(calls):
    """Error reports carry a traceback: the engine's own frames differ between the two
    paths (one call instead of three), the message and the user's frames must not."""
    out = []
    for call in calls:
        if call[0] == "error":
            lines = call[1].splitlines()
            user = next(i for i, line in enumerate(lines) if "test_hosting.py" in line)
            call = ("error", lines[0], *lines[user:])
        out.append(call)
    return out


def _run_rows(hosted, rows, runner, source="sentence-spout", stream="default"):
    """Each row's outcome (None, or the exception type) and the collector calls it made."""
    run = (hosted.tuple_runner(source, stream, 1) if runner else
           lambda id, values: hosted.execute(hosted.make_tuple(id, source, stream, 1, values)))
    outcomes = []
    for tup_id, values in rows:
        try:
            run(tup_id, values)
            outcomes.append(None)
        except ComponentFailure as failure:
            outcomes.append(type(failure.original).__name__)
        except (TypeError, ValueError):  # the row does not fit the stream's fields
            outcomes.append("bad row")
    return outcomes


@pytest.mark.parametrize("body,attrs", [
    (SplitBody, {}), (SplitBody, {"exit_on_exception": False}), (AckByHand, {}),
    (OwnAck, {}), (OwnProcessTuple, {}), (SplitBody, {"auto_ack": False}),
], ids=["stock", "keeps-running", "acks-by-hand", "own-ack", "own-process-tuple", "no-auto-ack"])
def test_tuple_runner_does_exactly_what_make_tuple_then_execute_does(flavour, body, attrs):
    if flavour != "ours" and body in (OwnAck, OwnProcessTuple):
        pytest.skip("pystorm bolts are fed through their own _run()")
    expected_hosted, expected = host_bolt(flavour, body=body, attrs=attrs)
    hosted, calls = host_bolt(flavour, body=body, attrs=attrs)
    want = _run_rows(expected_hosted, RUNNER_ROWS, runner=False)
    got = _run_rows(hosted, RUNNER_ROWS, runner=True)
    assert got == want
    assert _without_engine_frames(calls.calls) == _without_engine_frames(expected.calls)
    assert "bad row" in got  # the wrong-arity row is refused on both paths
    assert hosted.component._current_tups == expected_hosted.component._current_tups


def test_a_stock_bolt_is_run_in_one_call_per_tuple_not_through_execute():
    """Otherwise the comparison above would compare the two-call path with itself."""
    hosted, calls = host_bolt("ours")
    hosted.execute = None  # the fused path must not need it
    hosted.tuple_runner("sentence-spout", "default", 1)("1", ["a"])
    assert calls.names() == ["emit", "log", "metric", "ack"]


def test_tuple_runner_of_an_undeclared_source_stream_gives_plain_tuple_values():
    seen = []

    class Record:
        def process(self, tup):
            seen.append((tup.id, tup.component, tup.stream, tup.task, tup.values))

    hosted, calls = host_bolt("ours", body=Record)
    hosted.tuple_runner("2nd", "undeclared", 1)("9", ["p", 2])
    assert seen == [("9", "2nd", "undeclared", 1, ("p", 2))]
    assert calls.calls == [("ack", "9")]
