"""Start a shell component and host it behind the engines' task interface.

This is what Storm does in ``ShellSpout.open`` / ``ShellBolt.prepare``:
build the command line, start the process, hand it the conf and context,
and wait for its pid.  What comes back looks to an engine like any hosted
spout or bolt (``compat.storm_api.hosting``), plus ``poll()`` for bolts.
"""
from __future__ import annotations

import functools
import logging
import shlex
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from compat.storm_api.collector import OutputCollector
from compat.storm_api.component import component_identity
from engine.config.multilang import shellbolt_max_pending, subprocess_timeout

from .bolt import Activity, ShellBoltHost
from .dispatch import MessageDispatcher
from .errors import ShellStartError
from .failure import component_failure
from .framing import framing_for
from .handshake import handshake
from .launch import shell_argv, spawn
from .process import ShellProcess
from .spout import ShellSpoutHost

__all__ = ["host_shell_component"]


def host_shell_component(kind: str, command: str, script: str | None, storm_conf: dict,
                         context: dict, collector: OutputCollector, logger: logging.Logger,
                         *, cwd: Path | str, serializer: str = "json",
                         wake: Callable[[], None] | None = None) -> ShellSpoutHost | ShellBoltHost:
    """Start ``command script`` in ``cwd`` as task ``context["taskid"]`` and host it.

    ``kind`` is ``'spout'`` or ``'bolt'``; ``serializer`` is the multi-lang
    framing the process speaks (``'json'``, Storm's default, or
    ``'msgpack'``, matching ``streamparse_run -s``).  Every collector call
    happens on the thread calling the host's methods; ``wake`` is called
    from a bridge thread when a bolt's process has sent something, so the
    engine can call ``poll()`` soon.

    Raises ``ValueError`` for a bad ``kind``, ``serializer`` or config
    value, and ``ComponentFailure`` (after cleaning up) when the process
    cannot be started or fails the handshake, with its exit status and
    stderr tail when it died.
    """
    if kind not in ("spout", "bolt"):
        raise ValueError(f"kind must be 'spout' or 'bolt', not {kind!r}")
    framing = framing_for(serializer)
    timeout = subprocess_timeout(storm_conf)
    max_pending = shellbolt_max_pending(storm_conf) if kind == "bolt" else 0
    argv = shell_argv(command, script)
    identity = component_identity(storm_conf, context)
    name, task_id = identity["component_name"], identity["task_id"]
    activity = Activity(wake) if kind == "bolt" else None
    pid_dir = Path(tempfile.mkdtemp(prefix="multilang-pids-"))
    remove_pid_dir = functools.partial(shutil.rmtree, pid_dir, ignore_errors=True)
    process: ShellProcess | None = None
    try:
        try:
            popen = spawn(argv, cwd)
        except OSError as exc:
            raise ShellStartError(f"cannot start {shlex.join(argv)} in {cwd}: {exc}") from None
        process = ShellProcess(popen, argv, framing, logger, wake=activity)
        process.pid = handshake(process, storm_conf, context, pid_dir, timeout)
        logger.info("Launched subprocess with pid %s: %s", process.pid, process.describe())
        dispatcher = MessageDispatcher(kind, collector, logger)
        if activity is not None:  # a bolt's
            return ShellBoltHost(process, dispatcher, framing, name, task_id, timeout,
                                 max_pending, activity, on_close=remove_pid_dir)
        return ShellSpoutHost(process, dispatcher, name, task_id, timeout, on_close=remove_pid_dir)
    except Exception as exc:
        if process is not None:
            process.stop()
        remove_pid_dir()
        raise component_failure(name, task_id, exc) from exc
