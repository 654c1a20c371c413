"""One running multi-lang subprocess: its pipes, its stderr and its shutdown.

A reader thread decodes stdout into a queue as fast as the process writes,
so the process never blocks on a full stdout pipe and whoever drives the
protocol (the spout host on the engine thread, the bolt host on the engine
thread too) can wait with a timeout.  It records when the last message
arrived, which is Storm's heartbeat: any message counts.  When stdout ends
(or carries garbage) the reader reaps what it can (exit status, the last
stderr lines) and queues one final error, so the failure report names the
real cause instead of "broken pipe".

A second thread drains stderr, logging each line on the component's logger
(Storm logs a subprocess's stderr at INFO) and keeping the last lines for
failure reports; an undrained stderr pipe would block the child.

Writes take a lock so that :meth:`stop` can tell whether a writer is stuck
on a full stdin pipe: then there is no point in an orderly EOF, and the
process is signalled instead.
"""
from __future__ import annotations

import collections
import logging
import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from queue import Empty, SimpleQueue
from typing import IO, Any

from .errors import PipeClosed, ShellError, ShellProtocolError, SubprocessDied
from .framing import Framing

__all__ = ["ShellProcess"]

#: How many stderr lines a failure report shows.
STDERR_TAIL_LINES = 20


class _Ended:
    """The reader's last word: the error that ended the conversation."""

    __slots__ = ("error",)

    def __init__(self, error: ShellError) -> None:
        self.error = error


class ShellProcess:
    """A started subprocess speaking the multi-lang protocol through ``framing``.

    ``pid`` is the Popen pid until the handshake reports the component's own
    (they differ when the command is a wrapper script).  ``wake`` is called
    from the reader thread whenever a message (or the end) arrives.
    """

    def __init__(self, popen: subprocess.Popen, argv: list[str], framing: Framing,
                 logger: logging.Logger, wake: Callable[[], None] | None = None) -> None:
        self.popen = popen
        self.argv = argv
        self.pid: int = popen.pid
        self.logger = logger
        self._framing = framing
        self._wake = wake
        # spawned with its three streams piped (engine.common.multilang.launch.spawn)
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._stdin: IO[bytes] = popen.stdin
        self._stdout: IO[bytes] = popen.stdout
        self._stderr: IO[bytes] = popen.stderr
        self._stdin_fd = popen.stdin.fileno()
        self._stdin_closed = False
        self._write_lock = threading.Lock()
        self._messages: SimpleQueue = SimpleQueue()
        self._ended: ShellError | None = None
        #: The error that ended the conversation, once the reader has stopped.
        self.final_error: ShellError | None = None
        self._stopped = False
        self.last_seen = time.monotonic()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True,
                                               name=f"multilang-stderr-{popen.pid}")
        self._reader_thread = threading.Thread(target=self._read_stdout, daemon=True,
                                               name=f"multilang-reader-{popen.pid}")
        self._stderr_thread.start()
        self._reader_thread.start()

    # -- description -----------------------------------------------------------------
    def describe(self) -> str:
        """``pid 123 (streamparse_run bolts.Split)``, for messages."""
        pids = (f"pid {self.pid}" if self.pid == self.popen.pid
                else f"pid {self.pid} (started as {self.popen.pid})")
        return f"{pids} ({shlex.join(self.argv)})"

    def stderr_tail(self) -> list[str]:
        return list(self._stderr_tail)

    def _exit_status(self) -> str:
        code = self.popen.returncode
        if code is None:
            return "closed its stdout but is still running"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name} (exit code {code})"
        return f"exited with code {code}"

    def _death_report(self, cause: ShellError) -> SubprocessDied:
        tail = self.stderr_tail()
        first = f"subprocess {self.describe()} {self._exit_status()}"
        if tail:
            first += f"; stderr ends: {tail[-1].strip()}"
        lines = [first, f"  reading its stdout: {cause}"]
        if tail:
            lines.append(f"  last {len(tail)} line(s) of its stderr:")
            lines.extend(f"    {line}" for line in tail)
        else:
            lines.append("  its stderr was empty")
        return SubprocessDied("\n".join(lines))

    # -- reading ---------------------------------------------------------------------
    def _read_stdout(self) -> None:
        reader = self._framing.reader(self._stdout)
        put = self._messages.put
        error: ShellError
        try:
            while True:
                message = reader.read()
                self.last_seen = time.monotonic()
                if not isinstance(message, dict):
                    raise ShellProtocolError(
                        f"the subprocess sent {message!r}; multi-lang messages from a "
                        "component are objects")
                put(message)
                self._notify()
        except PipeClosed as exc:
            if not self._stopped:
                self._wait_quietly(self.popen, 2.0)
                self._stderr_thread.join(1.0)
            error = self._death_report(exc)
        except ShellError as exc:
            error = exc
        except Exception as exc:  # an OSError on the pipe: report it as the end
            error = self._death_report(PipeClosed(f"reading failed: {exc!r}"))
        self.final_error = error
        put(_Ended(error))
        self._notify()

    def _notify(self) -> None:
        if self._wake is None:
            return
        try:
            self._wake()
        except Exception:  # the engine's problem; it must not stop the reading
            self.logger.exception("the wake callback of a shell component raised")

    def _drain_stderr(self) -> None:
        try:
            for raw in iter(self._stderr.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                self._stderr_tail.append(line)
                self.logger.info("subprocess stderr: %s", line)
        except (OSError, ValueError):
            pass  # the pipe was closed under us by stop()

    def next_message(self, timeout: float | None = None) -> dict | None:
        """The next message, waiting up to ``timeout`` s (None if none came).

        Raises the error that ended the conversation once it is reached (and
        on every later call).
        """
        if self._ended is not None:
            raise self._ended
        try:
            item = self._messages.get(timeout=timeout) if timeout is None or timeout > 0 \
                else self._messages.get_nowait()
        except Empty:
            return None
        if isinstance(item, _Ended):
            self._ended = item.error
            raise item.error
        return item

    def wait_for_end(self, timeout: float) -> ShellError | None:
        """After a failed write: give the reader ``timeout`` s to report why the
        process went away, which says more than "broken pipe"."""
        self._reader_thread.join(timeout)
        return self.final_error

    # -- writing ---------------------------------------------------------------------
    def send(self, message: Any) -> None:
        self.write(self._framing.encode(message))

    def write(self, data: bytes) -> None:
        """Write one encoded message; ``PipeClosed`` when stdin is gone."""
        view = memoryview(data)
        with self._write_lock:
            if self._stdin_closed:
                raise PipeClosed("the subprocess's stdin is already closed")
            try:
                while view:
                    view = view[os.write(self._stdin_fd, view):]
            except OSError as exc:  # BrokenPipeError: the process exited
                raise PipeClosed(f"cannot write to the subprocess: {exc.strerror or exc}") from None

    # -- shutdown --------------------------------------------------------------------
    @staticmethod
    def _wait_quietly(popen: subprocess.Popen, timeout: float) -> bool:
        try:
            popen.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _signal_group(self, sig: int) -> None:
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace: float = 1.0) -> None:
        """Stop and reap the process: stdin EOF, then SIGTERM, then SIGKILL.

        Bounded: about ``2 * grace`` seconds plus a final wait for SIGKILL.
        The whole process group is signalled, so helpers a shell script
        started go too.  Safe to call more than once.
        """
        if self._stopped:
            return
        self._stopped = True
        popen = self.popen
        # EOF first (pystorm exits 2 on it), unless a writer is stuck in a
        # full pipe: the process is not reading, so only a signal will do.
        eof_sent = False
        if self._write_lock.acquire(timeout=0.2):
            try:
                self._close_stdin()
                eof_sent = True
            finally:
                self._write_lock.release()
        if not self._wait_quietly(popen, grace if eof_sent else 0.0):
            self._signal_group(signal.SIGTERM)
            if not self._wait_quietly(popen, grace):
                self._signal_group(signal.SIGKILL)
                self._wait_quietly(popen, 5.0)
        # Anything left in the group (a script's helpers) goes with its leader.
        if popen.returncode is not None:
            self._signal_group(signal.SIGKILL)
        # the dead process's pipe no longer blocks writers
        if self._write_lock.acquire(timeout=2.0):
            try:
                self._close_stdin()
            finally:
                self._write_lock.release()
        self._reader_thread.join(2.0)
        self._stderr_thread.join(2.0)
        for stream in (popen.stdout, popen.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def _close_stdin(self) -> None:
        if not self._stdin_closed:
            self._stdin_closed = True
            try:
                self._stdin.close()
            except OSError:
                pass
