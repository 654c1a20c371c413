"""The instance's side of the byte credits (engine.common.network.credits): the executor gives
back a tuple batch's read credit once the loop looks at its input again (it has run the
batch), through the gateway to the Stream Manager, a quarter of the capacity at a time
and all of it before the loop waits; control messages spend none."""

from __future__ import annotations

import threading

import zmq

from engine.common.network.credits import CREDIT, decode_credit
from engine.instance.gateway import TO_STMGR
from engine.instance.loop import ASSIGNMENT, TUPLE_BATCH, ReadCreditPipe
from tests.zmq_pairs import pipe_pair


def test_a_batch_is_given_back_after_the_loop_ran_it():
    with pipe_pair() as (gateway, raw):
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


def test_a_busy_bolt_gives_credit_back_a_quarter_at_a_time_and_all_before_waiting():
    with pipe_pair() as (gateway, raw):
        pipe = ReadCreditPipe(raw, lambda: True, capacity=4000)   # gives back at 1,000
        for _ in range(5):
            gateway.send_multipart([TUPLE_BATCH, b"x" * 300])
        for _ in range(3):                           # the loop, busy: more input waiting
            assert pipe.poll(0)
            pipe.recv_multipart()
        assert pipe.owed == 900 and not gateway.poll(20)
        assert pipe.poll(0)
        pipe.recv_multipart()                        # 1,200 owed
        assert pipe.poll(0)                          # crosses the threshold: back at once
        assert gateway.recv_multipart() == [TO_STMGR, CREDIT, _payload(1200)]
        pipe.recv_multipart()
        assert pipe.owed == 300
        assert not pipe.poll(0) and not gateway.poll(20)
        assert not pipe.poll(10)                     # the loop waits: everything goes back
        assert gateway.recv_multipart() == [TO_STMGR, CREDIT, _payload(300)]
        gateway.send_multipart([TUPLE_BATCH, b"z" * 100])
        assert pipe.poll(1000)
        pipe.recv_multipart()
        gateway.send_multipart([ASSIGNMENT, b"plan"])
        while not raw.poll(0):
            pass
        pipe.recv_multipart()                        # something was ready: no return
        assert pipe.owed == 100 and not gateway.poll(20)
        assert pipe.given_back == 1500


def test_a_receive_that_would_wait_gives_everything_back_first():
    with pipe_pair() as (gateway, raw):
        pipe = ReadCreditPipe(raw, lambda: True, capacity=4000)
        gateway.send_multipart([TUPLE_BATCH, b"x" * 200])
        pipe.recv_multipart()
        assert pipe.owed == 200
        received = []
        waiter = threading.Thread(target=lambda: received.append(pipe.recv_multipart()))
        waiter.start()                               # nothing ready: it would block
        assert gateway.recv_multipart() == [TO_STMGR, CREDIT, _payload(200)]
        gateway.send_multipart([ASSIGNMENT, b"plan"])
        waiter.join(5)
        assert received == [[ASSIGNMENT, b"plan"]] and pipe.owed == 0


def _payload(n: int) -> bytes:
    from engine.common.network.credits import encode_credit
    return encode_credit(n)[1]
