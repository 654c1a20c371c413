"""The Stream Manager's flow control: write credit given back to local instances,
backpressure started and stopped on its own queues (and told to every peer), and the
peers' backpressure news applied. A part of ``StreamManager`` (``manager.py``), kept
apart because it is a job of its own: when to stop reading, not where tuples go."""

from __future__ import annotations

import logging
from typing import Any

import zmq

from engine.common.network import MalformedMessage, decode, encode, type_frame
from engine.common.network.credits import encode_credit
from engine.messages import stmgr_pb2
from engine.stmgr.backpressure import EpisodeLog

log = logging.getLogger("heron.stmgr")

START_BACKPRESSURE = type_frame(stmgr_pb2.StartBackPressureMessage)
STOP_BACKPRESSURE = type_frame(stmgr_pb2.StopBackPressureMessage)


class FlowControl:
    """``StreamManager``'s credit and backpressure methods (its state: ``outbox``,
    ``bp``, ``peers``, ``_owed_credit``, ``_replaced_peers``, set by its ``__init__``)."""

    # the StreamManager's state these methods read and change
    spec: Any
    id: str
    pplan: Any
    outbox: Any
    bp: Any
    peers: dict[str, tuple[str, zmq.Socket]]
    data_endpoint: str
    _owed_credit: dict[bytes, list]
    _give_back_at: int
    _replaced_peers: set[str]

    def _give_write_credit(self) -> None:
        """Give local instances back the write credit of the batches read from them once
        it reaches a quarter of the smaller write capacity, one message each, straight to
        the socket: never queued behind data waiting for
        read credit (an instance waiting for write credit may be the one that has to
        execute that data first). A full socket keeps it owed until the next round."""
        for identity in list(self._owed_credit):
            sock, owed = self._owed_credit[identity]
            if owed < self._give_back_at:
                continue
            try:
                sock.send_multipart([identity, *encode_credit(owed)], zmq.NOBLOCK)
            except zmq.Again:
                continue
            except zmq.ZMQError as exc:  # gone: its next registration starts afresh
                log.debug("credit for %r not sent: %s", identity[:60], exc)
            del self._owed_credit[identity]

    def _may_read_peers(self) -> bool:
        """Peers' tuples wait in the socket until this Stream Manager has a physical plan:
        a peer whose spouts started first (it got the plan a moment earlier) would otherwise
        have its tuples dropped here for want of a route. Also not while a local instance
        is congested (see ``_instances_congested``)."""
        return self.pplan is not None and not self._instances_congested()

    def _instances_congested(self) -> bool:
        """A local instance has more than the high watermark waiting: stop reading from
        peers until it is under it (their own queues to us then grow, and they pause their
        spouts), so what waits here stays within the watermark plus one message."""
        return (self.outbox.largest_instance_queue() >= self.bp.high
                or self.outbox.longest_instance_wait() >= self.bp.high_secs)

    def _spouts_must_wait(self) -> bool:
        """Checked before each spout message: one batch past the watermark at most."""
        self._backpressure()
        return self.bp.paused

    @property
    def bp_log(self) -> EpisodeLog:
        """This manager's backpressure log lines, limited when it flaps (EpisodeLog)."""
        found = self.__dict__.get("_bp_log")
        if found is None:
            found = self.__dict__["_bp_log"] = EpisodeLog("backpressure")
        return found

    @property
    def peer_bp_logs(self) -> dict[str, EpisodeLog]:
        """Each peer's backpressure news' log lines, limited when it flaps."""
        return self.__dict__.setdefault("_peer_bp_logs", {})

    def _backpressure(self) -> None:
        key, waiting = self.outbox.largest_queue()
        oldest_key, waited = self.outbox.longest_wait()
        change = self.bp.update(waiting, waited)
        if change is None:
            self.bp_log.flush(active=self.bp.initiated)
            for peer, peer_log in self.peer_bp_logs.items():
                peer_log.flush(active=peer in self.bp.from_peers)
            return
        if change == "start":
            self.bp_log.start("backpressure: %d bytes waiting for %s, the oldest for %.0f ms "
                              "(for %s); local spouts paused, telling %d peer(s)", waiting, key,
                              waited * 1000, oldest_key, len(self.peers))
            message: Any = stmgr_pb2.StartBackPressureMessage()
        else:
            self.bp_log.stop("backpressure over")
            message = stmgr_pb2.StopBackPressureMessage()
        message.topology_name = self.spec.topology_name
        message.topology_id = self.spec.topology_id
        message.stmgr = self.id
        message.message_id = str(self.bp.episodes)
        message.data_endpoint = self.data_endpoint
        frames = encode(message)
        for peer_id, (_, sock) in self.peers.items():
            try:  # ahead of the data queued for that peer, when there is room
                sock.send_multipart(frames, zmq.NOBLOCK)
            except zmq.Again:
                self.outbox.send(peer_id, sock, frames)

    def _peer_backpressure(self, kind: bytes, payload: bytes) -> None:
        message = decode([kind, payload])
        if message.topology_id == self.spec.topology_id \
                and message.data_endpoint in self._replaced_peers:
            # sent by an incarnation a new plan has replaced or removed, and read only now
            # (it waited in the socket behind data): the pause it announced ended with it
            log.info("ignored backpressure news from %s's replaced or removed incarnation "
                     "at %s", message.stmgr, message.data_endpoint)
            return
        if message.topology_id != self.spec.topology_id or message.stmgr not in self.peers:
            raise MalformedMessage(f"backpressure message from {message.stmgr!r} of topology "
                                   f"{message.topology_id!r}: not a peer of this topology")
        peer_log = self.peer_bp_logs.get(message.stmgr)
        if peer_log is None:
            peer_log = self.peer_bp_logs[message.stmgr] = EpisodeLog(
                f"{message.stmgr}'s backpressure")
        if kind == START_BACKPRESSURE:
            if message.stmgr not in self.bp.from_peers:
                peer_log.start("%s is in backpressure: local spouts paused", message.stmgr)
            self.bp.peer_started(message.stmgr)
        else:
            if message.stmgr in self.bp.from_peers:
                peer_log.stop("%s is out of backpressure", message.stmgr)
            self.bp.peer_stopped(message.stmgr)
