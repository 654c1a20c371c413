"""What the tests' throw-away servers (tests/zookeeper_server.py, tests/redis_server.py)
share: one server process on this machine at a free port, in its own temporary directory.

The process runs in its own session (so its own process group), so stop() takes down
everything it started, and is told to die with the process that started it
(PR_SET_PDEATHSIG), so a killed test run leaves no server. start() waits until the server
serves, and starts it again on another port when the chosen one was taken in between;
errors carry the end of the server's log. A subclass gives the command line, the
readiness check, the names and the address used in messages.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, TypeVar

__all__ = ["LocalServer", "free_port"]

_PR_SET_PDEATHSIG = 1

_Server = TypeVar("_Server", bound="LocalServer")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now at ``host`` (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec_fn that has the kernel SIGKILL the child when its parent exits.

    prctl is looked up here, in the parent, so the hook run between fork and exec only
    calls one C function (no imports or allocations while other threads may hold locks).
    """
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(1)

    return hook


class _PortTaken(Exception):
    """The chosen port was taken before the server could bind it."""


class LocalServer:
    """One server process on ``host`` at a free port (``port`` once started)."""

    #: The service, in "<service>: every port tried was taken".
    service: ClassVar[str]
    #: The program, in "<program> exited with ..." and "<program> at <address> did not ...".
    program: ClassVar[str]
    #: The prefix of the temporary directory's name.
    workdir_prefix: ClassVar[str]
    #: The log's file name in the temporary directory.
    log_name: ClassVar[str]
    #: Raised by start() when unmet_requirements() says why it cannot start.
    unavailable: ClassVar[type[Exception]]
    #: Whether the process's stdout and stderr are the log (else the program writes it).
    output_to_log: ClassVar[bool] = False
    #: Seconds between two readiness checks while starting.
    poll_interval: ClassVar[float] = 0.1

    def __init__(self, *, host: str, start_timeout: float) -> None:
        self.host = host
        self.start_timeout = start_timeout
        self.port: int | None = None
        self.workdir: Path | None = None
        self.proc: subprocess.Popen | None = None

    # What a subclass gives.

    def unmet_requirements(self) -> str | None:
        """Why the server cannot be started here, or None when it can."""
        raise NotImplementedError

    def command(self) -> list[str]:
        """The command line; ``workdir`` and ``port`` are set when it is called."""
        raise NotImplementedError

    def serving(self) -> bool:
        """True once the server serves requests."""
        raise NotImplementedError

    @property
    def address(self) -> str:
        """Where the server is, for messages (raises when it is not started)."""
        raise NotImplementedError

    # The shared part.

    def _require_started(self) -> None:
        if self.port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @property
    def log_path(self) -> Path | None:
        return None if self.workdir is None else self.workdir / self.log_name

    def log_tail(self, lines: int = 30) -> str:
        """The end of the server's log, for failure messages."""
        path = self.log_path
        if path is None or not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def start(self: _Server) -> _Server:
        """Start the server and wait until it serves; raise with its log otherwise.

        The port is free when chosen but another process may take it before the server
        binds it, so a start that fails with "Address already in use" is tried again on a
        new port (a few times)."""
        why = self.unmet_requirements()
        if why:
            raise self.unavailable(why)
        if self.proc is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        for attempt in range(3):
            try:
                return self._start_once()
            except _PortTaken:
                if attempt == 2:
                    raise RuntimeError(f"{self.service}: every port tried was taken") from None
        raise AssertionError("unreachable")

    def _start_once(self: _Server) -> _Server:
        self.workdir = Path(tempfile.mkdtemp(prefix=self.workdir_prefix))
        self.port = free_port(self.host)
        command = self.command()
        log = open(self.log_path, "wb") if self.output_to_log else None
        try:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if log is None else log, stderr=subprocess.STDOUT,
                cwd=self.workdir, start_new_session=True,
                preexec_fn=_die_with_parent_hook())  # noqa: PLW1509 - it only calls prctl
        finally:
            if log is not None:
                log.close()
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            returncode = self.proc.poll()
            if returncode is not None:
                tail = self.log_tail(200)
                self.stop()
                if "Address already in use" in tail:
                    raise _PortTaken()
                tail = "\n".join(tail.splitlines()[-30:])
                raise RuntimeError(f"{self.program} exited with {returncode} while starting; "
                                   f"log:\n{tail}")
            if self.serving():
                return self
            time.sleep(self.poll_interval)
        tail = self.log_tail()
        address = self.address
        self.stop()
        raise RuntimeError(f"{self.program} at {address} did not answer within "
                           f"{self.start_timeout:g}s; log:\n{tail}")

    def stop(self, grace: float = 5.0) -> None:
        """Stop the process group (SIGTERM, SIGKILL after ``grace``), wait for it, and remove
        the temporary directory. Safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is not None:
            self._signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(proc, signal.SIGKILL)
                proc.wait(10)
            # The group may hold other processes even after its leader exited.
            self._signal_group(proc, signal.SIGKILL)
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    @staticmethod
    def _signal_group(proc: subprocess.Popen, sig: int) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def __enter__(self: _Server) -> _Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
