"""The multi-lang handshake, from Storm's side.

Storm writes ``{"conf", "pidDir", "context"}``; the process creates the
empty file ``<pidDir>/<pid>`` and answers ``{"pid": <pid>}``.  Storm trusts
the reply; we also check the pid file, because a process that answers
without creating it is not following the protocol (and Storm's supervisor
uses those files to find processes to kill).  The reply must come within
the subprocess timeout: a process that hangs while starting is as dead to
us as one that hangs later.
"""
from __future__ import annotations

from pathlib import Path

from .errors import ShellStartError
from .process import ShellProcess

__all__ = ["handshake"]


def handshake(process: ShellProcess, conf: dict, context: dict, pid_dir: Path,
              timeout: float) -> int:
    """Send the setup message and return the pid the process reports."""
    try:
        process.send({"conf": conf, "pidDir": str(pid_dir), "context": context})
    except (TypeError, ValueError) as exc:
        raise ShellStartError(
            f"the conf or context cannot be sent to the subprocess: {exc}") from None
    reply = process.next_message(timeout)
    if reply is None:
        raise ShellStartError(
            f"subprocess {process.describe()} did not answer the handshake within {timeout:g} s")
    pid = reply.get("pid")
    if isinstance(pid, bool) or not isinstance(pid, int):
        raise ShellStartError(
            f"subprocess {process.describe()} answered the handshake with {reply!r}; "
            f"expected {{\"pid\": <int>}}")
    if not (pid_dir / str(pid)).is_file():
        raise ShellStartError(
            f"subprocess {process.describe()} reported pid {pid} but created no pid file "
            f"{pid_dir / str(pid)}")
    return pid

