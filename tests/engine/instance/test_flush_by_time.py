"""Under a flood a bolt's input pipe is never empty, so "flush when the input pauses"
alone would hold its output until a batch filled: ``heron.instance.emit.batch.time.ms``
bounds how long an emitted row waits in the bolt's open batch."""

from __future__ import annotations

from types import SimpleNamespace

import msgpack

from engine.instance.executor import TUPLE_BATCH
from tests.engine.instance.test_bolt_batches import batch, bolt_loop


class FloodedPipe:
    """A pipe with input waiting every time it is polled, for ``batches`` batches."""

    def __init__(self, batches: int) -> None:
        self.left = batches
        self.payload = batch([msgpack.packb(["w", 1], use_bin_type=True)] * 10)

    def poll(self, timeout: int = 0) -> bool:
        return True

    def recv_multipart(self, copy: bool = False) -> list[SimpleNamespace]:
        self.left -= 1
        return [SimpleNamespace(bytes=TUPLE_BATCH), SimpleNamespace(bytes=self.payload)]


def run_flooded(flush_secs: float, batches: int = 50) -> tuple[int, list]:
    loop, sent = bolt_loop(acking=False)
    pipe = FloodedPipe(batches)
    loop.pipe = pipe
    loop.flush_secs = flush_secs
    loop._running = lambda: pipe.left > 0
    loop.publish_metrics = lambda: None
    loop.run()
    return loop.stats.executed, sent


def test_a_flooded_bolt_sends_its_output_once_the_batch_time_is_up():
    executed, sent = run_flooded(flush_secs=1e-9)
    assert executed == 500
    # every input batch's rows went out behind it, though more input was always waiting
    assert len(sent) == 50


def test_without_the_time_bound_a_flood_would_hold_the_output_until_a_batch_filled():
    executed, sent = run_flooded(flush_secs=3600.0)
    assert executed == 500
    assert sent == []  # 500 rows: under the 1,024-row batch, never flushed by the flood
