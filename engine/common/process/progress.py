"""How a supervised process tells its supervisor it made progress.

The supervisor removes ``<pid dir>/<name>.progress`` before each start and passes its
path in ``HERON_PROGRESS_FILE``; the process calls :func:`mark_progress` once it has
done useful work (an instance: processed or emitted a tuple). When the process exits,
the file's presence is the "progress since the last start" the restart policy asks for
(engine.common.process.restart_policy); a process that never marks it counts as progressing
only once it has run for the policy's reset time.
"""

from __future__ import annotations

import os
from pathlib import Path

PROGRESS_FILE_ENV = "HERON_PROGRESS_FILE"

_marked = False


def progress_path(pid_dir: Path | str, name: str) -> Path:
    return Path(pid_dir) / f"{name}.progress"


def mark_progress() -> None:
    """Leave the progress marker (once per process; later calls cost one check)."""
    global _marked
    if _marked:
        return
    _marked = True
    path = os.environ.get(PROGRESS_FILE_ENV)
    if not path:
        return
    try:
        Path(path).touch()
    except OSError:
        pass  # the supervisor then relies on the time the process ran
