"""A flood into a slow bolt, at-most-once: every hop stays under its documented cap.

The spouts emit as fast as they may into bolts a hundred times slower, across two
containers. What the Stream Managers report must show the caps of
engine.common.network.inflight holding: no batch an instance sends is bigger than
``heron.instance.emit.batch.size.bytes`` (plus the one row that crossed it), so no zmq
queue of a hop holds more than ``DATA_HWM`` such batches each way; and no queue a
Stream Manager keeps for a destination grows past the high watermark plus the batch in
hand. Between a Stream Manager and its instances the byte credits hold
(engine.common.network.credits): no bolt is ever sent more than its read capacity plus one
batch beyond what it executed, and no spout hands its gateway more than its write
capacity plus one batch beyond what its Stream Manager read, although the spouts are
held back most of the run. No timing is asserted: what is checked is what was queued.
"""

from __future__ import annotations

import time

import pytest

from engine.config.batching import BATCH_BYTES_KEY
from engine.config.credits import BOLT_READ_KEY, SPOUT_WRITE_KEY
from tests.e2e.heron.helpers import PROJECTS, HeronRun

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

ACKING = PROJECTS / "acking"
HIGH = 1024 * 1024          # e2e_backpressure's high watermark (1 MB)
BATCH = 16 * 1024           # the batch cap this test sets
ROW = 256                   # one [n, 100-char padding] row and a batch's header, generously
#: the cap counts the rows' bytes; the TupleBatch adds a tag and a length to each row
FRAMING = 1.05
STMGRS = ("stmgr-1", "stmgr-2")
READ = 48 * 1024            # the credits this test sets
WRITE = 40 * 1024


def test_a_flooded_slow_bolt_keeps_every_hop_under_its_cap(tmp_path, isolated_imports):
    run = HeronRun(ACKING, "e2e_backpressure", tmp_path / "run", keep_all=False,
                   options={"e2e.seconds": 12, "e2e.delay": 0.0005, BATCH_BYTES_KEY: BATCH,
                            BOLT_READ_KEY: READ, SPOUT_WRITE_KEY: WRITE})
    samples: list[dict[str, dict[str, str]]] = []
    try:
        run.start()
        began = time.monotonic()
        while time.monotonic() - began < 8:
            metrics = run.metrics()
            samples.append({sid: dict(values) for sid, values in metrics.items()})
            time.sleep(0.5)
        result = run.finish(time_limit=0.1)
    finally:
        run.close()
    assert result.error is None, (result.error, result.log_dir)
    last = samples[-1]
    for sid in STMGRS:
        figures = {name: int(last[sid][name]) for name in (
            "__largest-batch-bytes-max", "__largest-queue-bytes-max",
            "__time-spouts-paused-ms", "__longest-queue-wait-ms-max")}
        # the spouts' batches respected the byte cap (a batch closes on the row crossing it)
        largest = figures["__largest-batch-bytes-max"]
        assert 0 < largest <= BATCH * FRAMING + ROW, (sid, figures)
        # the queue per destination: never past the high watermark and the batch in hand
        assert 0 <= figures["__largest-queue-bytes-max"] <= HIGH + largest, (sid, figures)
        # the spouts were held back: the bolts are a hundred times slower than them
        assert figures["__time-spouts-paused-ms"] > 0, (sid, figures)
        # read credit: what went to a bolt and was not yet executed, at most the
        # capacity and the batch that crossed it (and bolts were kept busy up to it)
        in_flight = int(last[sid]["__read-credit-in-flight-bytes-max"])
        assert READ // 2 <= in_flight <= READ + largest, (sid, in_flight, largest)
    # write credit: what a spout handed its gateway before its Stream Manager read it
    spouts = {iid: values for iid, values in last.items() if "firehose" in iid}
    assert len(spouts) == 2, sorted(last)
    for iid, values in spouts.items():
        held = int(values["__write-credit-in-flight-bytes-max"])
        assert 0 < held <= WRITE + BATCH * FRAMING + ROW, (iid, held)
        # and it did hold them back: they waited for credit while their Stream
        # Manager was not reading them
        assert int(values["__write-credit-wait-ms"]) > 0, (iid, values)
    # the bolts kept counting while the spouts were held back
    assert result.components["slow"].executed > 0
    assert run.alive() == []
