"""Differential tests: pystorm and compat.storm_api say the same things on the wire.

Each component body is written once and mixed into pystorm's base class and
into ours; both run ``run()`` on the same multi-lang input, and their output
messages must be identical apart from the pid, log text and traceback frames.
"""
from __future__ import annotations

import pytest

from tests.compat.storm_api.storm_api_wire import (
    SERIALIZER_NAMES,
    SPOUT_CONTEXT,
    command,
    handshake,
    heartbeat,
    normalize,
    run_wire,
    tick,
    tup,
    variants,
)


def wire_outputs(body: type, base: str, messages: list, serializer: str) -> tuple[list, int]:
    """Run both variants, assert they agree, and return ours for extra checks."""
    theirs_cls, ours_cls = variants(body, base)
    theirs, theirs_code = run_wire(theirs_cls, messages, serializer)
    ours, ours_code = run_wire(ours_cls, messages, serializer)
    assert normalize(ours) == normalize(theirs)
    assert ours_code == theirs_code
    return ours, ours_code


def commands(messages: list) -> list:
    return [m.get("command", "pid") if isinstance(m, dict) else m for m in messages]


class SplitBody:
    outputs = ["word"]

    def process(self, tup):
        if tup.component == "sentence-spout" and tup.stream == "default":
            for word in tup.values.sentence.split():
                self.emit([word])
        else:
            self.emit([type(tup.values).__name__, list(tup.values)], stream="other")

    def process_tick(self, tup):
        self.emit(["tick", tup.values[0], type(tup.values).__name__])


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_bolt_splits_acks_syncs_heartbeat_and_names_values_types_like_pystorm(tmp_path, serializer):
    messages = [handshake(tmp_path), tup("-11", ["the quick fox"]), heartbeat("-12"),
                tup("-13", [1, 2], stream="pairs"), tup("-14", ["z"], comp="2nd", task=2),
                tup("-15", ["q"], comp="unknown", task=9), tick("-16", freq=5)]
    out, code = wire_outputs(SplitBody, "Bolt", messages, serializer)
    assert code == 2
    assert out[2] == {
        "command": "emit",
        "tuple": ["the"],
        "anchors": ["-11"],
        "need_task_ids": False,
    }
    assert {"command": "sync"} in out
    names = [m["tuple"][0] for m in out if m.get("stream") == "other"]
    assert names == ["Sentence_SpoutPairsTuple", "_2NdDefaultTuple", "tuple"]


class FeaturesBody:
    outputs = ["word"]

    def process(self, tup):
        word = tup.values.sentence
        if word == "direct":
            self.emit(["d"], direct_task=5)
            self.emit([repr(self.emit(["d2"], direct_task=7, need_task_ids=True))])
        elif word == "ids":
            self.emit([repr(self.emit(["x"], need_task_ids=True))], stream="other")
        elif word == "anchors":
            self.emit(["a"], anchors=[tup, "raw-id"])
            self.emit(["b"], anchors=[])
        elif word == "log":
            self.log("hi")
            self.log("d", "debug")
            self.log("w", "warning")
            self.log("x", "nonsense")
            self.log(123, "error")
            self.logger.info("info line")
            self.logger.debug("not sent at info level")
        elif word == "metric":
            self.report_metric("count", 3)
            self.report_metric("nested", {"a": [1, 2]})
        elif word == "report":
            try:
                raise KeyError("k")
            except KeyError as exc:
                self.raise_exception(exc, tup)
                self.raise_exception(exc)
        elif word == "nondict":
            self.send_message(["not", "a", "dict"])
        elif word == "namedtuple":
            self.emit(tup.values)
        elif word == "unserializable":
            self.emit([object()])
        elif word == "rawsend":
            self.send_message({"command": "emit", "tuple": ["raw"]})


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_bolt_emit_variants_logs_metrics_and_errors_match_pystorm(tmp_path, serializer):
    words = [
        "direct",
        "anchors",
        "log",
        "metric",
        "report",
        "nondict",
        "namedtuple",
        "unserializable",
        "rawsend",
    ]
    messages = [handshake(tmp_path)] + [tup(f"-{i}", [w]) for i, w in enumerate(words)]
    out, code = wire_outputs(FeaturesBody, "Bolt", messages, serializer)
    assert code == 2
    emits = [m for m in out if m.get("command") == "emit"]
    assert emits[0] == {
        "command": "emit",
        "tuple": ["d"],
        "anchors": ["-0"],
        "task": 5,
        "need_task_ids": False,
    }
    assert emits[1] == {"command": "emit", "tuple": ["d2"], "anchors": ["-0"], "task": 7}
    assert emits[2]["tuple"] == ["[7]"]
    assert {"command": "metrics", "name": "nested", "params": {"a": [1, 2]}} in out
    assert [m["level"] for m in out if m.get("command") == "log"][1:7] == [2, 1, 3, 2, 4, 2]


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_need_task_ids_reads_task_id_replies_across_interleaved_tuples(tmp_path, serializer):
    messages = [
        handshake(tmp_path),
        [7, 8],
        tup("-1", ["ids"]),
        tup("-2", ["ids"]),
        tup("-3", ["plain"]),
        [4, 5],
        [9],
    ]
    out, code = wire_outputs(FeaturesBody, "Bolt", messages, serializer)
    assert code == 2
    replies = [m["tuple"] for m in out if m.get("stream") == "other"]
    assert replies == [["[7, 8]"], ["[4, 5]"]]
    assert "need_task_ids" not in [m for m in out if m.get("tuple") == ["x"]][0]


class ManualBody:
    auto_ack = False
    auto_fail = False
    auto_anchor = False

    def process(self, tup):
        self.emit([tup.values.sentence])
        if tup.values.sentence == "bad":
            self.fail(tup)
            raise ValueError("bad input")
        self.ack(tup.id)


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_auto_flags_off_means_unanchored_manual_ack_and_no_auto_fail(tmp_path, serializer):
    messages = [handshake(tmp_path), tup("-1", ["good"]), tick("-2"), tup("-3", ["bad"])]
    out, code = wire_outputs(ManualBody, "Bolt", messages, serializer)
    assert code == 1
    assert commands(out)[2:] == ["emit", "ack", "emit", "fail", "log", "error", "sync"]
    assert out[2]["anchors"] == []


class FailingBody:
    def process(self, tup):
        if tup.values.sentence == "boom":
            self.emit(["before"])
            raise ValueError("boom happened")
        self.emit([tup.values.sentence])

    def process_tick(self, tup):
        raise RuntimeError("tick failed")


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_bolt_exception_reports_error_fails_tuple_and_exits_1(tmp_path, serializer):
    messages = [handshake(tmp_path), tup("-1", ["ok"]), tup("-2", ["boom"]), tup("-3", ["never"])]
    out, code = wire_outputs(FailingBody, "Bolt", messages, serializer)
    assert code == 1
    assert commands(out)[-5:] == ["emit", "log", "error", "sync", "fail"]
    assert out[-1] == {"command": "fail", "id": "-2"}
    assert normalize([out[-3]])[0]["msg"][0].startswith(
        "Python ValueError raised while processing Tuple Tuple("
    )


class ForgivingFailingBody(FailingBody):
    exit_on_exception = False


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_exit_on_exception_false_keeps_processing_after_reporting(tmp_path, serializer):
    messages = [handshake(tmp_path), tup("-1", ["boom"]), tick("-2"), tup("-3", ["after"])]
    out, code = wire_outputs(ForgivingFailingBody, "Bolt", messages, serializer)
    assert code == 2
    assert {"command": "fail", "id": "-2"} in out
    assert {"command": "emit", "tuple": ["after"], "anchors": ["-3"], "need_task_ids": False} in out


class WordsBody:
    outputs = ["sentence"]

    def initialize(self, conf, ctx):
        self.n = 0
        self.log(f"init {conf['topology.name']} {ctx['componentid']}")

    def next_tuple(self):
        self.n += 1
        if self.n == 1:
            self.emit(["a"], tup_id="x1")
        elif self.n == 2:
            self.emit(["b"])
        elif self.n == 3:
            self.emit(["c"], tup_id=3, stream="other", direct_task=4)
        elif self.n == 4:
            self.emit([repr(self.emit(["d"], tup_id="x4", need_task_ids=True))])
        elif self.n == 5:
            self.emit([repr(self.emit(["e"], direct_task=9, need_task_ids=True))])
        elif self.n == 7:
            raise ValueError("spout broke")

    def ack(self, tup_id):
        self.emit(["acked", tup_id])

    def fail(self, tup_id):
        self.emit(["failed", tup_id])

    def activate(self):
        self.log("activated")

    def deactivate(self):
        self.emit(["deactivated"])


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_spout_commands_each_end_with_sync_and_errors_exit_1(tmp_path, serializer):
    nexts = [command("next") for _ in range(3)]
    messages = (
        [handshake(tmp_path, context=SPOUT_CONTEXT)]
        + nexts
        + [
            command("next"),
            [2, 3],
            command("next"),
            command("next"),
            command("ack", "x1"),
            command("fail", 3),
            command("activate"),
            command("deactivate"),
            command("bogus"),
            command("next"),
            command("next"),
        ]
    )
    out, code = wire_outputs(WordsBody, "Spout", messages, serializer)
    assert code == 1
    assert out[3] == {"command": "emit", "tuple": ["a"], "id": "x1", "need_task_ids": False}
    assert out[5] == {"command": "emit", "tuple": ["b"], "need_task_ids": False}
    assert out[7] == {"command": "emit", "tuple": ["c"], "id": 3, "stream": "other", "task": 4,
                      "need_task_ids": False}
    assert out[9] == {"command": "emit", "tuple": ["d"], "id": "x4"}
    assert out[10]["tuple"] == ["[2, 3]"]
    assert commands(out).count("sync") == 12


class ReliableBody:
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.n = 0

    def next_tuple(self):
        self.n += 1
        if self.n < 3:
            self.emit([f"w{self.n}"], tup_id=f"id{self.n}", stream="s")
        else:
            self.emit(["no id"])


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_reliable_spout_replays_max_fails_times_then_acks_and_requires_ids(tmp_path, serializer):
    messages = ([handshake(tmp_path, context=SPOUT_CONTEXT), command("next"), command("next")]
                + [command("fail", "id1")] * 4 + [command("ack", "id2"), command("ack", "nope"),
                                                  command("fail", "nope"), command("next")])
    out, code = wire_outputs(ReliableBody, "ReliableSpout", messages, serializer)
    assert code == 1
    replays = [m for m in out if m.get("command") == "emit" and m["id"] == "id1"]
    assert len(replays) == 4 and replays[-1]["stream"] == "s"
    assert normalize(out)[-2]["msg"][-1] == (
        "ValueError: You must provide a tuple ID when emitting with a "
        "ReliableSpout in order for the tuple to be tracked."
    )


class WordBatchBody:
    def group_key(self, tup):
        return tup.values.sentence[0]

    def process_batch(self, key, tups):
        if key == "x":
            raise ValueError("bad batch")
        self.emit([key, len(tups)], need_task_ids=True)


def batch_messages(tmp_path, words_then_ticks):
    messages, n = [handshake(tmp_path)], 0
    for item in words_then_ticks:
        n += 1
        messages.append(tick(f"-{n}") if item == "TICK" else heartbeat(f"-{n}") if item == "HB"
                        else tup(f"-{n}", [item]))
    return messages


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_batching_bolt_flushes_on_second_tick_with_batch_anchors_and_acks(tmp_path, serializer):
    items = [
        "apple",
        "avocado",
        "banana",
        "TICK",
        "blueberry",
        "HB",
        "TICK",
        "TICK",
        "TICK",
        "cherry",
        "TICK",
    ]
    out, code = wire_outputs(
        WordBatchBody, "BatchingBolt", batch_messages(tmp_path, items), serializer
    )
    assert code == 2
    emits = [m for m in out if m.get("command") == "emit"]
    assert [e["tuple"] for e in emits] == [["a", 2], ["b", 2], ["c", 1]]
    assert emits[0]["anchors"] == ["-1", "-2"] and emits[0]["need_task_ids"] is False


class SlowBatchBody(WordBatchBody):
    ticks_between_batches = 2


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_batching_bolt_honours_ticks_between_batches(tmp_path, serializer):
    out, code = wire_outputs(
        SlowBatchBody,
        "BatchingBolt",
        batch_messages(tmp_path, ["apple", "TICK", "TICK", "TICK"]),
        serializer,
    )
    assert commands(out)[2:] == ["ack", "ack", "ack", "emit", "ack", "log"]


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_batching_bolt_failure_fails_every_pending_batch_and_exits_1(tmp_path, serializer):
    items = ["xylophone", "apple", "TICK", "TICK", "banana"]
    out, code = wire_outputs(
        WordBatchBody, "BatchingBolt", batch_messages(tmp_path, items), serializer
    )
    assert code == 1
    assert [m["id"] for m in out if m.get("command") == "fail"] == ["-1", "-2"]


class ForgivingBatchBody(WordBatchBody):
    exit_on_exception = False


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_batching_bolt_without_exit_fails_only_the_current_batch(tmp_path, serializer):
    items = ["xylophone", "apple", "TICK", "TICK", "banana", "TICK", "TICK"]
    out, code = wire_outputs(
        ForgivingBatchBody, "BatchingBolt", batch_messages(tmp_path, items), serializer
    )
    assert code == 2
    assert [m["id"] for m in out if m.get("command") == "fail"] == ["-1"]


@pytest.mark.parametrize("serializer", SERIALIZER_NAMES)
def test_eof_before_handshake_completes_nothing_and_eof_later_exits_2(tmp_path, serializer):
    out, code = wire_outputs(SplitBody, "Bolt", [handshake(tmp_path)], serializer)
    assert code == 2 and commands(out) == ["pid", "log", "log"]


def test_log_path_sends_logs_to_a_file_instead_of_storm(tmp_path):
    theirs_cls, ours_cls = variants(FeaturesBody, "Bolt")
    results = []
    for name, cls in (("theirs", theirs_cls), ("ours", ours_cls)):
        log_dir = tmp_path / name
        log_dir.mkdir()
        conf = {"pystorm.log.path": str(log_dir), "pystorm.log.level": "debug"}
        out, code = run_wire(cls, [handshake(tmp_path, conf=conf), tup("-1", ["log"])])
        files = list(log_dir.iterdir())
        assert len(files) == 1 and files[0].name.startswith("pystorm_wire-test_split-bolt_3_")
        text = files[0].read_text()
        assert "info line" in text and "not sent at info level" in text
        results.append((normalize(out), code))
    assert results[0] == results[1]
    assert [m.get("command") for m in results[1][0]].count("log") == 5


def test_topology_debug_forwards_debug_records(tmp_path):
    out, _ = wire_outputs(FeaturesBody, "Bolt", [handshake(tmp_path, conf={"topology.debug": True}),
                                                 tup("-1", ["log"])], "json")
    assert any(
        m.get("level") == 1 and "not sent at info level" in m["msg"]
        for m in out
        if m.get("command") == "log"
    )
