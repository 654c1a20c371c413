"""An instance's log says "registered with the stream manager" once per registration
(issue 44): the gateway sends its registration at start and again when the connection
comes up, and the Stream Manager answers both; before, each answer logged the line. A
registration after the Stream Manager was lost is logged again."""

from __future__ import annotations

import logging
import threading

import pytest
import zmq

from engine.common.network import encode
from engine.instance.gateway import Gateway
from engine.messages import stmgr_pb2
from tests.engine.instance.test_gateway_registration import (  # noqa: F401
    answer_registrations,
    ctx,
    endpoints,
    start_gateway,
    stop_gateway,
    stream_manager,
    wait,
)

pytestmark = pytest.mark.timeout(60)

LINE = "registered with the stream manager"


def registered_lines(caplog) -> int:
    return sum(r.getMessage() == LINE for r in caplog.records if r.name == "heron.instance")


def answer(status: int = 1) -> list:
    response = stmgr_pb2.RegisterInstanceResponse()
    response.status.status = status
    return [zmq.Frame(f) for f in encode(response)]


def test_two_answers_to_one_registration_log_one_line(caplog):
    caplog.set_level(logging.DEBUG, logger="heron.instance")
    gw = Gateway.__new__(Gateway)
    gw.registered, gw._unanswered_since, gw.write_credit = False, None, None
    assert gw._from_stmgr(answer()) is None and gw.registered
    assert gw._from_stmgr(answer()) is None and gw.registered
    assert registered_lines(caplog) == 1
    # lost, then registered again: a new line, as it is news
    gw.registered = False
    gw._from_stmgr(answer())
    assert registered_lines(caplog) == 2


def test_a_gateway_answered_at_every_registration_logs_it_once(ctx, endpoints, caplog):  # noqa: F811 (fixtures imported above)
    caplog.set_level(logging.INFO, logger="heron.instance")
    sm = stream_manager(ctx, endpoints[0])
    gw, pipe = start_gateway(ctx, endpoints, threading.Event())
    try:
        seen: list[str] = []
        assert wait(lambda: seen.extend(answer_registrations(sm, 0.1)) or gw.registered, 10)
        seen.extend(answer_registrations(sm, 1.0))  # a repeated registration, answered
    finally:
        stop_gateway(gw, pipe)
        sm.close(linger=0)
    assert seen
    assert registered_lines(caplog) == 1, (seen, [r.getMessage() for r in caplog.records])
