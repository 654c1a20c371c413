"""Uploaders: where a topology package goes so that every node can fetch it.

``localfs`` copies it into a directory every node mounts (Heron's
LocalFileSystemUploader; ``heron.uploader.localfs.file.system.directory``) and hands out
a ``file://`` URL; ``http`` PUTs it to ``heron.uploader.http.uri`` and hands out that
URL. Both implement :class:`engine.spi.Uploader`; ``heron.class.uploader`` picks one
(:func:`uploader_for`). Nodes fetch with :func:`~engine.uploader.fetch.fetch`, which
knows both schemes.
"""

from __future__ import annotations

from engine.common.cluster.config import ClusterConfig
from engine.common.cluster.package import PackageError
from engine.common.launch import LaunchSpec
from engine.spi import Uploader
from engine.uploader.fetch import TRANSFER_TIMEOUT_SECS, fetch
from engine.uploader.http import HttpUploader
from engine.uploader.localfs import LocalFsUploader

#: ``heron.class.uploader`` value -> the plug-in
UPLOADERS: dict[str, type[Uploader]] = {"localfs": LocalFsUploader, "http": HttpUploader}


def uploader_for(cluster: ClusterConfig) -> Uploader:
    """The uploader a cluster configuration names (engine.common.cluster.config)."""
    if cluster.uploader == "localfs":
        return LocalFsUploader(cluster.require("heron.uploader.localfs.file.system.directory",
                                               file="uploader.yaml"))
    if cluster.uploader == "http":
        return HttpUploader(str(cluster.require("heron.uploader.http.uri", file="uploader.yaml")))
    raise PackageError(f"cluster {cluster.name!r} has no uploader (heron.class.uploader)")


def delete_package(spec: LaunchSpec) -> None:
    """Remove a topology's uploaded package (``heron kill``), with the uploader its cluster
    named when it was submitted (kept in the launch spec's scheduler config)."""
    if not spec.package_url:
        return
    config = spec.scheduler_config
    directory = config.get("heron.uploader.localfs.file.system.directory")
    if spec.package_url.startswith("file://") and directory:
        LocalFsUploader(directory).delete(spec.package_url)
    elif (spec.package_url.startswith(("http://", "https://"))
          and config.get("heron.uploader.http.uri")):
        HttpUploader(str(config["heron.uploader.http.uri"])).delete(spec.package_url)


__all__ = ["HttpUploader", "LocalFsUploader", "TRANSFER_TIMEOUT_SECS", "UPLOADERS", "Uploader",
           "delete_package", "fetch", "uploader_for"]
