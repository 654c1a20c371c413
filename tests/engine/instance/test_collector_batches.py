"""When an instance sends a tuple batch: at ``heron.instance.batch.size`` rows, or as
soon as the rows reach ``heron.instance.batch.bytes``, so a stream of large values does
not build multi-megabyte messages."""

from __future__ import annotations

import logging

from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.collector import TUPLE_BATCH, InstanceCollector, StreamOut
from engine.messages import tuple_pb2


def collector(batch_size: int, batch_bytes: int) -> tuple[InstanceCollector, list]:
    sent: list[list[bytes]] = []
    stream = StreamOut("default", ("blob",), False, [], [], leaf=False, captured=False)
    out = InstanceCollector("c", 1, {"default": stream}, serializer_for_config({}),
                            TaskStats("c", 1), logging.getLogger("test"), sent.append,
                            batch_size, None, batch_bytes=batch_bytes)
    return out, sent


def batches(sent: list) -> list[list[bytes]]:
    assert all(frames[0] == TUPLE_BATCH for frames in sent)
    return [list(tuple_pb2.TupleBatch.FromString(frames[1]).values) for frames in sent]


def test_large_rows_go_out_at_the_byte_bound():
    out, sent = collector(batch_size=1024, batch_bytes=10_000)
    for _ in range(10):
        out.emit([b"x" * 3_000], None, None, None, False, None)
    # 3 KB rows: a batch is sent with the row that reaches 10 KB, i.e. every 4th row
    sizes = [len(b) for b in batches(sent)]
    assert sizes == [4, 4]
    out.flush()
    assert [len(b) for b in batches(sent)] == [4, 4, 2]


def test_small_rows_go_out_at_the_row_bound():
    out, sent = collector(batch_size=5, batch_bytes=1 << 20)
    for i in range(12):
        out.emit([i], None, None, None, False, None)
    assert [len(b) for b in batches(sent)] == [5, 5]
    out.flush()
    rows = [v for b in batches(sent) for v in b]
    assert len(rows) == 12 and len(set(rows)) == 12  # every row once, none lost at a bound


def two_streams(batch_size: int = 1024) -> tuple[InstanceCollector, list]:
    sent: list[list[bytes]] = []
    streams = {name: StreamOut(name, ("n",), False, [], [], leaf=False, captured=False)
               for name in ("default", "errors")}
    out = InstanceCollector("c", 1, streams, serializer_for_config({}), TaskStats("c", 1),
                            logging.getLogger("test"), sent.append, batch_size, None)
    return out, sent


def sent_rows(sent: list) -> list[tuple[str, int]]:
    """(stream, value) of every row sent, in the order the batches went out."""
    serializer = serializer_for_config({})
    rows = []
    for frames in sent:
        batch = tuple_pb2.TupleBatch.FromString(frames[1])
        rows += [(batch.stream.id, serializer.loads(v)[0]) for v in batch.values]
    return rows


def test_rows_on_two_streams_go_out_in_emit_order():
    # Storm delivers one task's tuples in emit order per task pair whatever their stream;
    # Heron's instance keeps one open batch and sends it when a row on another stream comes
    out, sent = two_streams()
    emits = [("default", 1), ("default", 2), ("errors", 3), ("default", 4), ("errors", 5),
             ("errors", 6), ("default", 7)]
    for stream, n in emits:
        out.emit([n], stream, None, None, False, None)
    out.flush()
    assert sent_rows(sent) == emits
    # a batch per run of one stream: the switches cost a send each, nothing more
    assert [len(tuple_pb2.TupleBatch.FromString(f[1]).values) for f in sent] == [2, 1, 1, 2, 1]


def test_checked_emits_keep_emit_order_across_streams_too():
    # need_task_ids takes the validating path; the order rule is the same there
    out, sent = two_streams()
    out.emit([1], "default", None, None, False, None)
    assert out.emit([2], "errors", None, None, True, None) == []  # no consumers: no tasks
    out.emit([3], "default", None, None, True, None)
    out.flush()
    assert sent_rows(sent) == [("default", 1), ("errors", 2), ("default", 3)]
