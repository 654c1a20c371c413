"""What can go wrong between the bridge and a multi-lang subprocess.

Each of these ends up as the ``original`` of a
:class:`~engine.common.runtime.errors.ComponentFailure`, so the engine logs
one line and restarts the task (Storm would kill the whole worker with
exit status 11).  The first line of every message is meant to stand on its
own in that one-line log: it names the process and the cause; detail such
as the subprocess's last stderr lines follows on later lines.
"""
from __future__ import annotations

from engine.common.runtime.errors import StormApiError

__all__ = ["ShellError", "PipeClosed", "ShellProtocolError", "SubprocessDied", "HeartbeatTimeout",
           "ShellStartError"]


class ShellError(StormApiError):
    """Base of the multi-lang bridge's errors."""


class PipeClosed(ShellError):
    """The subprocess closed its end of a pipe (usually: it exited).

    Storm's equivalent is ``NoOutputException("Pipe to subprocess seems to
    be broken!")``.  ``partial`` holds what had been read of an unfinished
    message, which often explains the exit.
    """

    def __init__(self, message: str = "Pipe to subprocess seems to be broken!",
                 partial: bytes = b"") -> None:
        self.partial = partial
        if partial:
            message += f" Currently read output: {partial[:500]!r}"
        super().__init__(message)


class ShellProtocolError(ShellError):
    """The subprocess sent something that is not a valid multi-lang message."""


class SubprocessDied(ShellError):
    """The subprocess exited (or closed its stdout) while the task was running."""


class HeartbeatTimeout(ShellError):
    """Nothing arrived from the subprocess within the subprocess timeout."""


class ShellStartError(ShellError):
    """The subprocess could not be started or failed its handshake."""
