"""Uploaders: where a topology package goes so that every node can fetch it.

``localfs`` copies it into a directory every node mounts (Heron's
LocalFileSystemUploader; ``heron.uploader.localfs.file.system.directory``) and hands out
a ``file://`` URL; ``http`` PUTs it to ``heron.uploader.http.uri`` and hands out that
URL. Nodes fetch with :func:`fetch`, which knows both schemes. Neither is trusted for
integrity: the scheduler gives every node the package's SHA-256, checked before unpacking
(engine/cluster/package.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from engine.cluster.package import Package, PackageError

#: how long a node waits for a package download, and a submitter for its upload
TRANSFER_TIMEOUT_SECS = 120.0


class Uploader:
    """Puts a package where nodes fetch it; returns its URL."""

    def upload(self, package: Package, name: str) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def url_for(self, name: str) -> str:  # pragma: no cover - interface
        """Where :meth:`upload` puts a package of this name (``--dry-run`` shows it)."""
        raise NotImplementedError

    def delete(self, url: str) -> None:
        """Remove an uploaded package (``heron kill``); missing is fine."""


class LocalFsUploader(Uploader):
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory).expanduser()

    def url_for(self, name: str) -> str:
        return (self.directory / f"{name}.tar.gz").resolve().as_uri()

    def upload(self, package: Package, name: str) -> str:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=f".{name}.")
            with os.fdopen(fd, "wb") as out, open(package.path, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
            target = self.directory / f"{name}.tar.gz"
            os.replace(tmp, target)
        except OSError as exc:
            raise PackageError(f"localfs uploader: cannot write to {self.directory}: "
                               f"{exc.strerror or exc}") from None
        return target.resolve().as_uri()

    def delete(self, url: str) -> None:
        path = _file_path(url)
        if path is not None and path.parent == self.directory.resolve():
            path.unlink(missing_ok=True)


class HttpUploader(Uploader):
    def __init__(self, uri: str, timeout: float = TRANSFER_TIMEOUT_SECS) -> None:
        if not uri.startswith(("http://", "https://")):
            raise PackageError(f"http uploader: heron.uploader.http.uri {uri!r} is not an "
                               f"http(s) URL")
        self.uri = uri.rstrip("/")
        self.timeout = timeout

    def url_for(self, name: str) -> str:
        return f"{self.uri}/{urllib.parse.quote(name)}.tar.gz"

    def upload(self, package: Package, name: str) -> str:
        url = self.url_for(name)
        with open(package.path, "rb") as body:
            request = urllib.request.Request(url, data=body, method="PUT", headers={
                "Content-Type": "application/gzip", "Content-Length": str(package.size)})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    if answer.status not in (200, 201, 204):
                        raise PackageError(f"http uploader: PUT {url} answered {answer.status}")
            except urllib.error.HTTPError as exc:
                raise PackageError(f"http uploader: PUT {url} answered {exc.code} "
                                   f"{exc.reason}") from None
            except (urllib.error.URLError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise PackageError(f"http uploader: cannot PUT {url}: {reason}") from None
        return url

    def delete(self, url: str) -> None:
        request = urllib.request.Request(url, method="DELETE")
        try:
            urllib.request.urlopen(request, timeout=self.timeout).close()
        except (urllib.error.URLError, OSError):
            pass  # a server without DELETE keeps the file; nothing depends on its removal


def uploader_for(cluster: Any) -> Uploader:
    """The uploader a cluster configuration names (engine.cluster.config)."""
    if cluster.uploader == "localfs":
        return LocalFsUploader(cluster.require("heron.uploader.localfs.file.system.directory",
                                               file="uploader.yaml"))
    if cluster.uploader == "http":
        return HttpUploader(str(cluster.require("heron.uploader.http.uri", file="uploader.yaml")))
    raise PackageError(f"cluster {cluster.name!r} has no uploader (heron.class.uploader)")


def delete_package(spec: Any) -> None:
    """Remove a topology's uploaded package (``heron kill``), with the uploader its cluster
    named when it was submitted (kept in the launch spec's scheduler config)."""
    if not spec.package_url:
        return
    config = spec.scheduler_config
    directory = config.get("heron.uploader.localfs.file.system.directory")
    if spec.package_url.startswith("file://") and directory:
        LocalFsUploader(directory).delete(spec.package_url)
    elif spec.package_url.startswith(("http://", "https://")) and config.get("heron.uploader.http.uri"):
        HttpUploader(str(config["heron.uploader.http.uri"])).delete(spec.package_url)


def _file_path(url: str) -> Path | None:
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
            path = _file_path(url)
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
