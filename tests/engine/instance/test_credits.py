"""The instance's side of the byte credits (engine.network.credits): the executor gives
back a tuple batch's read credit once the loop looks at its input again (it has run the
batch), through the gateway to the Stream Manager; control messages spend none."""

from __future__ import annotations

import zmq

from engine.instance.gateway import TO_STMGR
from engine.instance.loop import ASSIGNMENT, TUPLE_BATCH, ReadCreditPipe
from engine.network.credits import CREDIT, decode_credit


def test_a_batch_is_given_back_after_the_loop_ran_it():
    ctx = zmq.Context()
    gateway = ctx.socket(zmq.PAIR)
    gateway.bind("inproc://credit-pipe")
    raw = ctx.socket(zmq.PAIR)
    raw.connect("inproc://credit-pipe")
    try:
        pipe = ReadCreditPipe(raw, lambda: True)
        gateway.send_multipart([TUPLE_BATCH, b"x" * 700])
        gateway.send_multipart([ASSIGNMENT, b"plan"])
        gateway.send_multipart([TUPLE_BATCH, b"y" * 300])
        assert pipe.poll(1000)
        frames = pipe.recv_multipart(copy=False)
        assert frames[0].bytes == TUPLE_BATCH and pipe.owed == 700
        assert not gateway.poll(20)                  # still running it: nothing back
        assert pipe.poll(0)                          # the loop looks again: it ran it
        assert gateway.recv_multipart() == [TO_STMGR, CREDIT, _payload(700)]
        pipe.recv_multipart()                        # the plan spends nothing
        assert pipe.owed == 0
        pipe.recv_multipart()
        assert pipe.owed == 300
        pipe.poll(0, zmq.POLLOUT)                    # waiting to send is not looking at input
        assert not gateway.poll(20)
        pipe.poll(0)
        frames = gateway.recv_multipart()
        assert frames[:2] == [TO_STMGR, CREDIT] and decode_credit(frames[2]) == 300
        assert pipe.given_back == 1000
    finally:
        gateway.close(0)
        raw.close(0)
        ctx.term()


def _payload(n: int) -> bytes:
    from engine.network.credits import encode_credit
    return encode_credit(n)[1]
