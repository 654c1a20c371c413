"""Owner-only directories and files.

The threat model (docs/security.md): processes of the same user on the same machine are
trusted; other local users are not. Anything the engine keeps that another user could
use against the topology (ipc sockets, keys, plans, pid files) therefore lives in
directories only the owner can enter. A directory that already exists is checked, not
fixed: if another user created ``/tmp/heron-<uid>`` before us, chmod-ing it would not
take away what they can already do inside it, so it is refused with its path named.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

#: overrides the runtime root (ipc sockets); tests point it at a temporary directory
RUNTIME_DIR_ENV = "HERON_RUNTIME_DIR"


class UnsafePathError(Exception):
    """A directory or file another user owns or can write; the text names it and why."""


def _describe_problem(path: Path, st: os.stat_result, *, kind: str) -> str | None:
    uid = os.getuid()
    if st.st_uid != uid:
        return (f"{path}: {kind} is owned by uid {st.st_uid}, not by you (uid {uid}); "
                f"refusing to use it (another user could read or replace what the engine "
                f"keeps there). Remove it or choose another location.")
    loose = stat.S_IMODE(st.st_mode) & 0o077
    if loose:
        return (f"{path}: {kind} has mode {stat.S_IMODE(st.st_mode):04o}; other users can "
                f"reach it. The engine needs it owner-only (0700 for a directory, 0600 for "
                f"a file): chmod go-rwx {path}")
    return None


def check_private_dir(path: Path | str) -> Path:
    """``path`` when it is a real directory (not a symlink) owned by this user with no
    group or other permissions; UnsafePathError otherwise."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UnsafePathError(f"{path}: directory does not exist") from None
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"{path}: is a symbolic link; the engine's private directories "
                              f"must be real directories")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePathError(f"{path}: exists and is not a directory")
    problem = _describe_problem(path, st, kind="directory")
    if problem:
        raise UnsafePathError(problem)
    return path


def private_dir(path: Path | str) -> Path:
    """Create ``path`` owner-only (0700) when missing, with missing parents created the
    usual way; check it when it exists. Returns the path."""
    path = Path(path).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o700)
        # mkdir's mode is masked by the umask; 0700 is already the tightest we want, but a
        # umask cannot widen it, so no chmod is needed unless someone raced us.
    except FileExistsError:
        _tighten_readable_dir(path)
    except OSError as exc:
        raise UnsafePathError(f"{path}: cannot create the directory: {exc.strerror}") from None
    return check_private_dir(path)


def _tighten_readable_dir(path: Path) -> None:
    """Earlier versions created the runtime root with the default umask (0755). When this
    user owns the directory and nobody else could ever write in it, nothing can have
    been planted there, so taking the read bits away is safe; a directory another user
    owns or can write stays refused by check_private_dir."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    mode = stat.S_IMODE(st.st_mode)
    if (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and mode & 0o077
            and not mode & 0o022):
        try:
            os.chmod(path, mode & 0o700, follow_symlinks=False)
        except (OSError, NotImplementedError):
            pass


def runtime_root() -> Path:
    """Where ipc sockets live: ``$HERON_RUNTIME_DIR`` or ``<tmp>/heron-<uid>``, owner-only.

    Unix socket paths are limited to about 107 bytes, which is why this is a short path
    under the temporary directory and not under a topology's working directory.
    """
    configured = os.environ.get(RUNTIME_DIR_ENV)
    if configured:
        return private_dir(configured)
    return private_dir(Path(tempfile.gettempdir()) / f"heron-{os.getuid()}")


def write_private_file(path: Path | str, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically with mode 0600, in a private directory
    (created when missing). Readers never see half a file nor a moment of looser mode."""
    path = Path(path)
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_private_file(path: Path | str) -> bytes:
    """The bytes of an owner-only regular file; UnsafePathError when the file is a
    symlink, not regular, another user's, or readable by others; FileNotFoundError when
    absent."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise UnsafePathError(f"{path}: is a symbolic link; refusing to read secrets "
                                  f"through it") from None
        raise UnsafePathError(f"{path}: cannot open: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePathError(f"{path}: not a regular file")
        problem = _describe_problem(path, st, kind="file")
        if problem:
            raise UnsafePathError(problem)
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
