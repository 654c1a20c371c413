"""Storm's ShellSpout/ShellBolt bridge: the engine's side of multi-lang.

Components declared as shell components (including unchanged streamparse
components run through ``streamparse_run``) run as subprocesses speaking
Storm's multi-lang protocol on stdin/stdout.  :func:`host_shell_component`
starts one and returns a host with the same interface engines use for
in-process components, so an engine treats both alike:

* :class:`ShellSpoutHost`: ``next_tuple``, ``ack``, ``fail``, ``activate``,
  ``deactivate``, ``is_exhausted``, ``close``; strictly sequential;
* :class:`ShellBoltHost`: ``make_tuple``, ``execute``, ``poll``, ``close``;
  asynchronous, with heartbeats and ``topology.shellbolt.max.pending``.

Both engines host shell components through it (:mod:`engine.storm` and the heron
engine's instances); the component's own side of the protocol (pystorm's serializers,
``Component``) is the API's, in :mod:`compat.storm_api`.

Failures of any kind surface as
:class:`~engine.common.runtime.errors.ComponentFailure` from the host's
methods, on the engine's thread.

Modules: ``launch`` (command line, process start, parent-death watch),
``framing`` (JSON/``end`` and msgpack), ``process`` (pipes, reader threads,
stderr tail, shutdown), ``handshake``, ``dispatch`` (messages to collector
calls), ``writer`` (a shell bolt's writer thread and queue), ``spout`` and
``bolt`` (the hosts), ``errors``; the keys it reads and their defaults are
``engine.config.multilang``.
"""
from __future__ import annotations

from .bolt import ShellBoltHost
from .errors import (
                     HeartbeatTimeout,
                     PipeClosed,
                     ShellError,
                     ShellProtocolError,
                     ShellStartError,
                     SubprocessDied,
)
from .host import host_shell_component
from .spout import ShellSpoutHost

__all__ = ["host_shell_component", "ShellSpoutHost", "ShellBoltHost", "ShellError", "PipeClosed",
           "ShellProtocolError", "SubprocessDied", "HeartbeatTimeout", "ShellStartError"]
