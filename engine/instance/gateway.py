"""The gateway thread: owns the Stream Manager and Metrics Manager sockets.

It registers the instance, relays physical plans and tuple batches to the executor
thread over a bounded in-process pipe, and sends what the executor produces. What the
Stream Manager sends is bounded by the instance's read credit (engine.common.network.credits:
it sends tuple batches only while the executor has given back enough), so the gateway
keeps reading it even when the executor's pipe is full, holding what does not fit in
order: credit coming back must never wait behind data. When the Stream Manager is not
taking data the gateway stops reading from the executor, whose own write credit bounds
what it hands over: pressure travels back to where it can be measured, and nothing here
grows without bound.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from typing import Any

import zmq
from zmq.utils.monitor import recv_monitor_message

from engine.common.network import (
    DATA_HWM,
    SOCKET_BUFFER_BYTES,
    MalformedMessage,
    connect_dealer,
    decode,
    encode,
    type_frame,
)
from engine.common.network.credits import CREDIT, WriteCredit, decode_credit
from engine.messages import metrics_pb2, stmgr_pb2

log = logging.getLogger("heron.instance")

#: executor -> gateway frame prefixes: where the rest goes
TO_STMGR = b"S"
TO_METRICS = b"M"
STOP = b"X"
#: gateway -> executor control (a pplan or tuple data otherwise arrive as [type, payload])
GATEWAY_FAILED = b"F"

_REGISTER_RESPONSE = type_frame(stmgr_pb2.RegisterInstanceResponse)
_ASSIGNMENT = type_frame(stmgr_pb2.NewInstanceAssignmentMessage)
_METRICS_REGISTER_RESPONSE = type_frame(metrics_pb2.MetricPublisherRegisterResponse)

REGISTER_RETRY_SECS = 2.0
#: a registration unanswered this long on a live connection is sent on a new connection:
#: a Stream Manager's ROUTER ignores, for good, a connection that arrived under an
#: identity another connection held (a predecessor still stopping), even after that one
#: closes; only a fresh connection is identified again
REGISTER_RECONNECT_SECS = 10.0
PIPE_HWM = DATA_HWM
#: metrics snapshots waiting for the gateway; a newer one makes older ones worthless
METRICS_PIPE_HWM = 4
#: messages for the executor the gateway holds before it stops reading the Stream
#: Manager: a safety net only, credits keep what it sends far below this
HELD_FOR_EXECUTOR = 4096


def metrics_pipe_endpoint(pipe_endpoint: str) -> str:
    """Metrics travel on their own pipe, so a task blocked by backpressure on its data
    still reports (what it emitted, that it is waiting) instead of going silent."""
    return pipe_endpoint + "-metrics"


class Gateway(threading.Thread):
    def __init__(self, ctx: zmq.Context, pipe_endpoint: str, *, stmgr_endpoint: str,
                 metrics_endpoint: str, instance: Any, topology_name: str, topology_id: str,
                 publisher: Any, stopping: threading.Event | None = None,
                 write_credit: WriteCredit | None = None) -> None:
        super().__init__(name="gateway", daemon=True)
        self.ctx = ctx
        self.pipe_endpoint = pipe_endpoint
        self.stmgr_endpoint = stmgr_endpoint
        self.metrics_endpoint = metrics_endpoint
        self.instance = instance
        self.topology_name = topology_name
        self.topology_id = topology_id
        self.publisher = publisher
        #: set when the process is asked to stop: it then never (re)registers, so a
        #: stopping instance cannot take its name from the copy that replaces it
        self.stopping = stopping or threading.Event()
        self.bound = threading.Event()
        self.registered = False
        self.connected = False
        #: the Stream Manager connection was given up (stopping, not registered)
        self.detached = False
        self._register_sent = 0.0
        #: since when a live connection has left our registration unanswered
        self._unanswered_since: float | None = None
        self.error: BaseException | None = None
        #: the executor's write credit: given back as the Stream Manager reads, reset on
        #: each registration (engine.common.network.credits)
        self.write_credit = write_credit

    def run(self) -> None:
        pipe = self.ctx.socket(zmq.PAIR)
        pipe.setsockopt(zmq.LINGER, 0)
        pipe.setsockopt(zmq.SNDHWM, PIPE_HWM)
        pipe.setsockopt(zmq.RCVHWM, PIPE_HWM)
        pipe.bind(self.pipe_endpoint)
        metrics_pipe = self.ctx.socket(zmq.PULL)
        metrics_pipe.setsockopt(zmq.LINGER, 0)
        metrics_pipe.setsockopt(zmq.RCVHWM, METRICS_PIPE_HWM)
        metrics_pipe.bind(metrics_pipe_endpoint(self.pipe_endpoint))
        self.bound.set()
        ident = self.instance.instance_id
        stmgr = connect_dealer(self.ctx, self.stmgr_endpoint, ident, sndhwm=DATA_HWM,
                               rcvhwm=DATA_HWM, buffer_bytes=SOCKET_BUFFER_BYTES,
                               connect=False)
        # A restarted Stream Manager knows nothing of us: zmq reconnects by itself, and the
        # connection events tell us to register again. The monitor comes first, so that
        # even the first connection is reported.
        self.monitor = stmgr.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        stmgr.connect(self.stmgr_endpoint)
        metrics = connect_dealer(self.ctx, self.metrics_endpoint, ident, sndhwm=100, rcvhwm=100)
        try:
            self._loop(pipe, stmgr, metrics, metrics_pipe)
        except BaseException as exc:  # engine bug: tell the executor, never die silently
            log.exception("gateway failed")
            self.error = exc
            try:
                pipe.send_multipart([GATEWAY_FAILED, str(exc).encode()], zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
        finally:
            try:
                stmgr.disable_monitor()
            except zmq.ZMQError:
                pass
            for sock in (self.monitor, stmgr, metrics, pipe, metrics_pipe):
                sock.close(linger=200)

    def _register(self, stmgr: zmq.Socket) -> None:
        """Send our registration (never while stopping); a full socket skips it, and the
        retry sends it later."""
        self._register_sent = time.monotonic()
        if self.stopping.is_set():
            return
        request = stmgr_pb2.RegisterInstanceRequest(topology_name=self.topology_name,
                                                    topology_id=self.topology_id)
        request.instance.CopyFrom(self.instance)
        request.pid = os.getpid()
        try:
            stmgr.send_multipart(encode(request), zmq.NOBLOCK)
        except zmq.Again:
            pass

    def _tend_registration(self, stmgr: zmq.Socket, reading: bool) -> None:
        """While unregistered: give the connection up when stopping, connect again when a
        live connection leaves the registration unanswered (only while ``reading`` from
        it: otherwise an answer may be waiting unread), and retry the registration."""
        now = time.monotonic()
        if self.stopping.is_set():
            # Being stopped with no Stream Manager: never reconnect to the next one.
            self._disconnect(stmgr)
            self.detached = True
            return
        if not self.connected or not reading:
            self._unanswered_since = None
        elif self._unanswered_since is None:
            self._unanswered_since = now
        elif now - self._unanswered_since > REGISTER_RECONNECT_SECS:
            log.warning("the stream manager has not answered our registration for %g s "
                        "on this connection; connecting again", REGISTER_RECONNECT_SECS)
            self._disconnect(stmgr)
            stmgr.connect(self.stmgr_endpoint)
            self.connected = False
            self._unanswered_since = None
            self._register_sent = now  # registered again once connected
        if now - self._register_sent > REGISTER_RETRY_SECS:
            self._register(stmgr)

    def _loop(self, pipe: zmq.Socket, stmgr: zmq.Socket, metrics: zmq.Socket,
              metrics_pipe: zmq.Socket) -> None:
        self._register(stmgr)
        metrics.send_multipart(encode(metrics_pb2.MetricPublisherRegisterRequest(
            publisher=self.publisher)), zmq.NOBLOCK)
        #: messages the executor's pipe had no room for, in order
        to_executor: collections.deque = collections.deque()
        # a message the Stream Manager had no room for
        to_stmgr: list[zmq.Frame] | None = None
        poller_cache: dict[tuple[bool, bool, bool], zmq.Poller] = {}
        while True:
            read_stmgr = len(to_executor) < HELD_FOR_EXECUTOR
            if not self.registered and not self.detached:
                self._tend_registration(stmgr, reading=read_stmgr)
                if self.detached:
                    to_stmgr = None
            read_pipe = to_stmgr is None
            held = bool(to_executor)
            key = (read_stmgr, read_pipe, held)
            poller = poller_cache.get(key)
            if poller is None:
                poller = zmq.Poller()
                stmgr_flags = (zmq.POLLIN if read_stmgr else 0) | (0 if read_pipe else zmq.POLLOUT)
                pipe_flags = (zmq.POLLIN if read_pipe else 0) | (zmq.POLLOUT if held else 0)
                if stmgr_flags:
                    poller.register(stmgr, stmgr_flags)
                if pipe_flags:
                    poller.register(pipe, pipe_flags)
                poller.register(metrics, zmq.POLLIN)
                poller.register(metrics_pipe, zmq.POLLIN)
                poller.register(self.monitor, zmq.POLLIN)
                poller_cache[key] = poller
            events = dict(poller.poll(500))
            if to_executor and events.get(pipe, 0) & zmq.POLLOUT:
                self._hand_over(pipe, to_executor)
            if to_stmgr is not None and events.get(stmgr, 0) & zmq.POLLOUT:
                try:
                    stmgr.send_multipart(to_stmgr, zmq.NOBLOCK, copy=False)
                    to_stmgr = None
                except zmq.Again:
                    pass
            if read_stmgr and events.get(stmgr, 0) & zmq.POLLIN:
                # Relay everything waiting; what the executor's pipe has no room for is
                # held, in order (the Stream Manager's credits bound it).
                while len(to_executor) < HELD_FOR_EXECUTOR:
                    try:
                        frames = stmgr.recv_multipart(zmq.NOBLOCK, copy=False)
                    except zmq.Again:
                        break
                    relayed = self._from_stmgr(frames)
                    if relayed is None:
                        continue
                    if to_executor:
                        to_executor.append(relayed)
                        continue
                    try:
                        pipe.send_multipart(relayed, zmq.NOBLOCK, copy=False)
                    except zmq.Again:
                        to_executor.append(relayed)
            if read_pipe and events.get(pipe, 0) & zmq.POLLIN:
                while to_stmgr is None:
                    try:
                        frames = pipe.recv_multipart(zmq.NOBLOCK, copy=False)
                    except zmq.Again:
                        break
                    where = frames[0].bytes
                    if where == TO_STMGR:
                        if self.detached:
                            continue  # stopping, with no Stream Manager to take it
                        try:
                            stmgr.send_multipart(frames[1:], zmq.NOBLOCK, copy=False)
                        except zmq.Again:
                            to_stmgr = frames[1:]
                    elif where == TO_METRICS:
                        try:
                            metrics.send_multipart(frames[1:], zmq.NOBLOCK, copy=False)
                        except zmq.Again:
                            pass  # metrics are periodic snapshots: the next one replaces it
                    elif where == STOP:
                        if not self.detached:
                            self._drain_to_stmgr(stmgr, to_stmgr)
                        self._relay_metrics(metrics_pipe, metrics)  # the last snapshot
                        return
            if events.get(self.monitor, 0) & zmq.POLLIN:
                if self._connection_events():
                    self._register(stmgr)
            if events.get(metrics_pipe, 0) & zmq.POLLIN:
                self._relay_metrics(metrics_pipe, metrics)
            if events.get(metrics, 0) & zmq.POLLIN:
                try:
                    metrics.recv_multipart(zmq.NOBLOCK)  # register responses: nothing to do
                except zmq.Again:
                    pass

    @staticmethod
    def _hand_over(pipe: zmq.Socket, held: collections.deque) -> None:
        """Pass held messages to the executor, in order, until its pipe is full."""
        while held:
            try:
                pipe.send_multipart(held[0], zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            held.popleft()

    def _disconnect(self, stmgr: zmq.Socket) -> None:
        """Drop the Stream Manager connection and its queued messages; zmq stops
        reconnecting to that endpoint."""
        try:
            stmgr.disconnect(self.stmgr_endpoint)
        except zmq.ZMQError:  # not connected under that name: nothing to drop
            pass

    def _connection_events(self) -> bool:
        """Read the Stream Manager connection's events; True when it (re)connected after
        we had registered, so the registration must be sent again."""
        again = False
        while True:
            try:
                event = recv_monitor_message(self.monitor, zmq.NOBLOCK)
            except zmq.Again:
                return again
            if event["event"] == zmq.EVENT_DISCONNECTED:
                if self.registered and not self.stopping.is_set():
                    log.warning("lost the stream manager; will register again when it is back")
                self.registered = False
                self.connected = False
            elif event["event"] == zmq.EVENT_CONNECTED:
                self.connected = True
                again = again or not self.registered

    @staticmethod
    def _relay_metrics(metrics_pipe: zmq.Socket, metrics: zmq.Socket) -> None:
        while True:
            try:
                frames = metrics_pipe.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            try:
                metrics.send_multipart(frames, zmq.NOBLOCK, copy=False)
            except zmq.Again:
                pass  # periodic snapshots: the next one replaces it

    def _from_stmgr(self, frames: list[Any]) -> list[Any] | None:
        """Frames to relay to the executor, or None for messages the gateway handles."""
        if len(frames) != 2:
            log.warning("dropped a malformed message from the stream manager (%d frames)",
                        len(frames))
            return None
        kind = frames[0].bytes
        if kind == CREDIT:
            returned = decode_credit(frames[1].bytes)
            if returned is not None and self.write_credit is not None:
                self.write_credit.give_back(returned)
            return None
        if kind == _REGISTER_RESPONSE:
            try:
                response = decode([kind, frames[1].bytes])
            except MalformedMessage as exc:
                log.warning("dropped a malformed register response from the stream manager: %s",
                            exc)
                return None
            if response.status.status != 1:
                log.error("the stream manager refused registration: %s", response.status.message)
                return None
            already = self.registered
            self.registered = True
            self._unanswered_since = None
            if self.write_credit is not None:
                # this Stream Manager (perhaps a new one) holds nothing of ours
                self.write_credit.reset()
            # the registration is sent again when the connection comes up, so the Stream
            # Manager may answer twice: say it once per registration, not per answer
            if not already:
                log.info("registered with the stream manager")
            else:
                log.debug("the stream manager answered a repeated registration")
            if response.HasField("pplan"):
                assignment = stmgr_pb2.NewInstanceAssignmentMessage(pplan=response.pplan)
                return [_ASSIGNMENT, assignment.SerializeToString()]
            return None
        return frames

    @staticmethod
    def _drain_to_stmgr(stmgr: zmq.Socket, pending: list[Any] | None) -> None:
        """Give a last held batch a bounded chance to go out before the sockets close."""
        if pending is None:
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                stmgr.send_multipart(pending, zmq.NOBLOCK, copy=False)
                return
            except zmq.Again:
                time.sleep(0.01)
