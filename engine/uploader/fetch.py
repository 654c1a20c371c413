"""How a node gets a topology package: :func:`fetch` knows the URLs every uploader hands
out (``file://`` from localfs, ``http(s)://`` from http). No uploader is trusted for
integrity: the scheduler gives every node the package's SHA-256, checked before
unpacking (engine/common/cluster/package.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from engine.common.cluster.package import PackageError

#: how long a node waits for a package download, and a submitter for its upload
TRANSFER_TIMEOUT_SECS = 120.0


def file_path(url: str) -> Path | None:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme != "file":
        return None
    return Path(urllib.parse.unquote(parsed.path))


def fetch(url: str, dest: Path | str, timeout: float = TRANSFER_TIMEOUT_SECS) -> Path:
    """Download (or copy) the package at ``url`` to ``dest``, complete or absent."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            path = file_path(url)
            if path is not None:
                try:
                    with open(path, "rb") as src:
                        shutil.copyfileobj(src, out, 1 << 20)
                except OSError as exc:
                    raise PackageError(f"cannot read the package {url}: "
                                       f"{exc.strerror or exc}") from None
            elif url.startswith(("http://", "https://")):
                try:
                    with urllib.request.urlopen(url, timeout=timeout) as answer:
                        shutil.copyfileobj(answer, out, 1 << 20)
                except urllib.error.HTTPError as exc:
                    raise PackageError(f"cannot fetch the package {url}: {exc.code} "
                                       f"{exc.reason}") from None
                except (urllib.error.URLError, OSError) as exc:
                    raise PackageError(f"cannot fetch the package {url}: "
                                       f"{getattr(exc, 'reason', exc)}") from None
            else:
                raise PackageError(f"cannot fetch the package {url}: only file:// and "
                                   f"http(s):// URLs are understood")
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest
