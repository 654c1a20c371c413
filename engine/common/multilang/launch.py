"""Starting a multi-lang subprocess so that it cannot outlive us.

Command line.  Storm builds ``[execution_command, script]`` and hands it to
``ProcessBuilder`` unsplit: the script travels as *one* argument, which is
why ``streamparse_run`` (and ``compat.storm_api.run``) re-split a lone
argument.  We do the same.  The one extension: a command that contains
whitespace and is not itself an executable (``"python -m
compat.storm_api.run"``) is split shell-style, since Storm could not have
run it at all.

Isolation.  The child gets its own session (so a Ctrl-C aimed at the
engine's process group does not reach it behind the engine's back, and
``close()`` can signal the whole group, grandchildren included) and is
started with pipes for stdin, stdout and stderr.

Parent death, two independent mechanisms:

1. stdin EOF.  When our process dies, the kernel closes our end of the
   child's stdin.  pystorm's read loop then raises ``StormWentAwayError``
   and exits with status 2 (tested); any protocol peer blocked reading
   stdin notices the same way.  This covers every platform, but not a
   child stuck in user code that never reads again.
2. ``PR_SET_PDEATHSIG`` (Linux).  The child asks the kernel for SIGKILL
   when its parent goes away, set between fork and exec, with a check that
   the parent did not die before the request took effect.  The kernel's
   "parent" is the *thread* that forked, not the process, so all children
   are forked by one long-lived daemon thread (:class:`_Spawner`): hosts are
   created and restarted on engine threads that come and go, and a child
   must not be killed because the executor thread that restarted it
   returned.  The spawner thread lives until the interpreter exits.

Together: whatever state the child is in, it is gone shortly after we are.
"""
from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from queue import SimpleQueue
from typing import Any

__all__ = ["shell_argv", "spawn"]

_PR_SET_PDEATHSIG = 1


def shell_argv(command: str, script: str | None) -> list[str]:
    """The argv Storm's ShellBolt/ShellSpout would run for ``command`` and ``script``."""
    if not command or not command.strip():
        raise ValueError("a shell component needs a non-empty command")
    head = [command]
    if any(ch.isspace() for ch in command) and shutil.which(command) is None:
        head = shlex.split(command)
    return head + ([script] if script else [])


def _parent_death_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` arranging SIGKILL on parent death, or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    parent = os.getpid()
    sigkill = int(signal.SIGKILL)

    def hook() -> None:
        # Runs in the forked child: keep it to plain system calls.
        prctl(_PR_SET_PDEATHSIG, sigkill, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return hook


class _Spawner:
    """One daemon thread that forks every child (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner_pid: int | None = None
        self._requests: SimpleQueue | None = None
        self._hook: Callable[[], None] | None = None

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen:
        requests = self._ensure_thread()
        done: Future = Future()
        requests.put((argv, kwargs, done))
        return done.result()

    def _ensure_thread(self) -> SimpleQueue:
        with self._lock:
            # After os.fork() the thread is gone from the copy: start a new one.
            if self._requests is None or self._owner_pid != os.getpid():
                self._owner_pid = os.getpid()
                self._requests = SimpleQueue()
                self._hook = _parent_death_hook()
                thread = threading.Thread(target=self._serve, args=(self._requests, self._hook),
                                          name="multilang-spawner", daemon=True)
                thread.start()
            return self._requests

    @staticmethod
    def _serve(requests: SimpleQueue, hook: Callable[[], None] | None) -> None:
        while True:
            argv, kwargs, done = requests.get()
            if not done.set_running_or_notify_cancel():
                continue
            try:
                done.set_result(subprocess.Popen(argv, preexec_fn=hook, **kwargs))
            except BaseException as exc:
                done.set_exception(exc)


_spawner = _Spawner()


def spawn(argv: list[str], cwd: Path | str) -> subprocess.Popen:
    """Start ``argv`` in ``cwd`` with binary pipes, its own session and a parent-death watch.

    Raises ``OSError`` (``FileNotFoundError``...) when it cannot be started.
    """
    return _spawner.popen(argv, cwd=str(cwd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
