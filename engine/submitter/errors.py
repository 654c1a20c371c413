"""The one error of the submitter and the runtime manager: its text says what failed and
what to do; ``code`` is the exit status the CLI reports (2: the request itself is wrong,
e.g. a name already running or a cluster that can never run it; 1: a failure)."""


class SubmitterError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def refused(message: str) -> SubmitterError:
    """A request that is wrong as given (exit 2)."""
    return SubmitterError(message, 2)
