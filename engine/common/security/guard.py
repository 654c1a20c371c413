"""Who may connect to a process's TCP sockets: CurveZMQ (or, opted out, PLAIN)
authentication of every peer, and the count of those refused.

Every engine TCP socket is secured with the topology's key pair (engine/common/security/keys.py).
A server socket alone would accept any client that knows its public key, which is not a
secret, so each process also answers ZeroMQ's authentication requests (ZAP, RFC 27) for
its context: a CURVE client is let in only if it proved it holds the topology's secret
key; a PLAIN client only with the topology's token. A peer without keys, or with another
topology's, fails the handshake: zmq drops the connection before a single frame of its
payload reaches engine code, so nothing it sends is ever parsed, let alone unpickled.

Why our own ZAP handler rather than ``zmq.auth.ThreadAuthenticator``: a refusal must be
counted per socket kind and logged once per peer with its address, and pyzmq's
authenticator keeps the address to itself. The protocol is a handful of frames; the
handshake and the cryptography remain libzmq's. Handshakes that fail before ZAP is asked
(no keys at all, another topology's server key) are seen through socket monitors, which
this same thread reads, so one thread per process owns every socket involved.

libzmq accepts every client of a CURVE server when no ZAP handler is bound in its
context, so the guard starts before the first server socket binds and stops only after
the last one closed (:meth:`stop` checks nothing is left watching).
"""

from __future__ import annotations

import hmac
import itertools
import logging
import queue
import threading
from collections import Counter
from typing import Any

import zmq
from zmq.utils import z85

from engine.common.process.stopping import STOP_POLL_MS
from engine.common.security.keys import TopologyKeys

log = logging.getLogger(__name__)

ZAP_ENDPOINT = "inproc://zeromq.zap.01"
_ZAP_VERSION = b"1.0"
_FAILED_EVENTS = (zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                  | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
_EVENT_TEXT: dict[int, str] = {
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "handshake failed",
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "handshake failed (a peer without the topology's "
                                         "keys, or with another topology's)",
    zmq.EVENT_HANDSHAKE_FAILED_AUTH: "refused by authentication",
}
_monitor_ids = itertools.count()


class SocketSecurity:
    """Sets a socket up as a server or a client of one topology's secured transport."""

    def __init__(self, keys: TopologyKeys) -> None:
        self.keys = keys

    @classmethod
    def for_launch(cls, spec: Any) -> SocketSecurity:
        """The security of a process started from a launch spec (its keys file)."""
        return cls(TopologyKeys.load(spec.home, topology_id=spec.topology_id))

    @property
    def plaintext(self) -> bool:
        return self.keys.plaintext

    def server(self, sock: zmq.Socket, kind: str) -> None:
        """Before bind: the socket authenticates every peer, under ZAP domain ``kind``."""
        sock.setsockopt(zmq.ZAP_DOMAIN, kind.encode())
        if self.keys.plaintext:
            sock.setsockopt(zmq.PLAIN_SERVER, 1)
        else:
            sock.setsockopt(zmq.CURVE_SECRETKEY, self.keys.secret_key)
            sock.setsockopt(zmq.CURVE_PUBLICKEY, self.keys.public_key)
            sock.setsockopt(zmq.CURVE_SERVER, 1)

    def client(self, sock: zmq.Socket) -> None:
        """Before connect: the socket proves it holds the topology's keys."""
        if self.keys.plaintext:
            sock.setsockopt(zmq.PLAIN_USERNAME, b"heron")
            sock.setsockopt(zmq.PLAIN_PASSWORD, self.keys.plain_password)
        else:
            sock.setsockopt(zmq.CURVE_SERVERKEY, self.keys.public_key)
            sock.setsockopt(zmq.CURVE_PUBLICKEY, self.keys.public_key)
            sock.setsockopt(zmq.CURVE_SECRETKEY, self.keys.secret_key)

    def check_endpoint(self, endpoint: str) -> None:
        """Plaintext mode is for one trusted machine: a TCP endpoint off loopback needs
        encryption."""
        if self.keys.plaintext and endpoint.startswith("tcp://"):
            host = endpoint[len("tcp://"):].rsplit(":", 1)[0].strip("[]")
            if not (host.startswith("127.") or host in ("localhost", "::1")):
                raise ValueError(f"{endpoint}: heron.network.plaintext is only allowed on "
                                 f"loopback; traffic between machines must be encrypted")


class ConnectionGuard:
    """The ZAP handler and refusal counter of one process (one zmq context).

    ``refusals`` counts refused connections per socket kind (``data``, ``tmanager``,
    ``controller``, ``scheduler``...); engine processes publish the total as the metric
    ``__connections-refused``.
    """

    def __init__(self, ctx: zmq.Context, keys: TopologyKeys, *, process: str) -> None:
        self.ctx = ctx
        self.security = SocketSecurity(keys)
        self.process = process
        self.refusals: Counter[str] = Counter()
        self._allowed_key = z85.decode(keys.public_key)
        self._password = keys.plain_password
        self._pending: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
        self._logged: set[Any] = set()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"guard-{process}", daemon=True)

    @classmethod
    def start(cls, ctx: zmq.Context, keys: TopologyKeys, *, process: str) -> ConnectionGuard:
        guard = cls(ctx, keys, process=process)
        guard._thread.start()
        if not guard._ready.wait(10) or guard._error is not None:
            raise RuntimeError(f"{process}: the connection guard did not start: {guard._error}")
        return guard

    @classmethod
    def for_launch(cls, ctx: zmq.Context, spec: Any, *, process: str) -> ConnectionGuard:
        """The guard of a process started from a launch spec (its keys file)."""
        return cls.start(ctx, TopologyKeys.load(spec.home, topology_id=spec.topology_id),
                         process=process)

    @property
    def refused(self) -> int:
        return sum(self.refusals.values())

    # -- used by the socket factories, from the socket's owner thread ----------------------
    def secure_server(self, sock: zmq.Socket, kind: str) -> None:
        if not self._thread.is_alive():
            raise RuntimeError(f"{self.process}: connection guard is not running")
        self.security.server(sock, kind)

    def watch(self, sock: zmq.Socket, kind: str) -> None:
        """After bind: report this socket's failed handshakes to the guard."""
        endpoint = f"inproc://heron-guard-{id(self)}-{next(_monitor_ids)}"
        sock.monitor(endpoint, _FAILED_EVENTS)
        self._pending.put((endpoint, kind))

    def stop(self) -> None:
        """After every secured socket of the context is closed, before ``ctx.term()``."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(5)

    # -- the guard thread ----------------------------------------------------------------
    def _run(self) -> None:
        monitors: dict[zmq.Socket, str] = {}
        try:
            zap = self.ctx.socket(zmq.REP)
            zap.setsockopt(zmq.LINGER, 0)
            zap.bind(ZAP_ENDPOINT)
        except BaseException as exc:  # e.g. a second guard in one context
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        poller = zmq.Poller()
        poller.register(zap, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                while True:
                    try:
                        endpoint, kind = self._pending.get_nowait()
                    except queue.Empty:
                        break
                    mon = self.ctx.socket(zmq.PAIR)
                    mon.setsockopt(zmq.LINGER, 0)
                    mon.connect(endpoint)
                    monitors[mon] = kind
                    poller.register(mon, zmq.POLLIN)
                for sock, _ in poller.poll(STOP_POLL_MS):
                    try:
                        if sock is zap:
                            self._answer(zap)
                        else:
                            self._on_monitor_event(sock, monitors)
                    except Exception as exc:  # never let one bad request stop the guard
                        log.warning("%s: connection guard: %s", self.process, exc)
        finally:
            for mon in monitors:
                mon.close(linger=0)
            zap.close(linger=0)

    def _answer(self, zap: zmq.Socket) -> None:
        frames = zap.recv_multipart()
        if len(frames) < 6 or frames[0] != _ZAP_VERSION:
            # Only libzmq talks on this inproc endpoint; answer what can be answered.
            if len(frames) >= 2:
                zap.send_multipart([_ZAP_VERSION, frames[1], b"400", b"bad request", b"", b""])
            else:
                zap.send_multipart([_ZAP_VERSION, b"", b"400", b"bad request", b"", b""])
            return
        _version, request_id, domain, address, _identity, mechanism = frames[:6]
        credentials = frames[6:]
        allowed = False
        if mechanism == b"CURVE" and credentials:
            allowed = hmac.compare_digest(credentials[0], self._allowed_key)
            who = z85.encode(credentials[0])[:8].decode() if len(credentials[0]) == 32 else "?"
        elif mechanism == b"PLAIN" and len(credentials) == 2:
            allowed = hmac.compare_digest(credentials[1], self._password)
            who = credentials[0][:40].decode(errors="replace")
        else:
            who = mechanism.decode(errors="replace")
        if allowed:
            zap.send_multipart([_ZAP_VERSION, request_id, b"200", b"OK", b"topology", b""])
            return
        zap.send_multipart([_ZAP_VERSION, request_id, b"400", b"not this topology's key",
                            b"", b""])
        kind = domain.decode(errors="replace")
        peer = address.decode(errors="replace")
        if (kind, peer, who) not in self._logged:
            self._logged.add((kind, peer, who))
            log.warning("%s: refused a %s connection on the %s socket from %s (client key "
                        "%s…): not this topology's key; further refusals from this peer are "
                        "counted in __connections-refused, not logged", self.process,
                        mechanism.decode(errors="replace"), kind, peer, who)

    def _on_monitor_event(self, mon: zmq.Socket, monitors: dict[zmq.Socket, str]) -> None:
        # pyzmq's monitor helpers import asyncio (about 20 ms): loaded on the first refused
        # connection, not at every Stream Manager's and Topology Master's start
        from zmq.utils.monitor import recv_monitor_message

        event = recv_monitor_message(mon)
        kind = monitors.get(mon, "?")
        if event["event"] == zmq.EVENT_MONITOR_STOPPED:
            return
        self.refusals[kind] += 1
        if event["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            return  # logged, with the peer's address, when ZAP refused it
        key = (kind, event["event"])
        if key not in self._logged:
            self._logged.add(key)
            endpoint = event.get("endpoint", b"")
            where = (endpoint.decode(errors="replace") if isinstance(endpoint, bytes)
                     else str(endpoint))
            log.warning("%s: refused a connection on the %s socket %s: %s; further refusals "
                        "are counted in __connections-refused, not logged", self.process, kind,
                        where, _EVENT_TEXT.get(event["event"], f"event {event['event']}"))
