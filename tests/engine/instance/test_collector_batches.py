"""When an instance sends a tuple batch: at ``heron.instance.batch.size`` rows, or as
soon as the rows reach ``heron.instance.batch.bytes``, so a stream of large values does
not build multi-megabyte messages."""

from __future__ import annotations

import logging

from compat.storm_api.local.stats import TaskStats
from engine.instance.collector import TUPLE_BATCH, InstanceCollector, StreamOut
from engine.messages import tuple_pb2
from engine.serialization import serializer_for_config


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
    for i in range(10):
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
