"""The ``localfs`` uploader (Heron's LocalFileSystemUploader): the package is copied into
a directory every node mounts (``heron.uploader.localfs.file.system.directory``) and
handed out as a ``file://`` URL."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from engine.common.cluster.package import Package, PackageError
from engine.spi import Uploader
from engine.uploader.fetch import file_path


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
        path = file_path(url)
        if path is not None and path.parent == self.directory.resolve():
            path.unlink(missing_ok=True)
