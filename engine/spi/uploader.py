"""The uploader interface (Heron's ``IUploader``): where a topology package goes so that
every node of a cluster can fetch it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: the interfaces import no implementation
    from engine.common.cluster.package import Package


@runtime_checkable
class Uploader(Protocol):
    def upload(self, package: Package, name: str) -> str:
        """Put ``package`` where nodes fetch it under ``name``; returns its URL."""

    def url_for(self, name: str) -> str:
        """Where :meth:`upload` puts a package of this name (``--dry-run`` shows it)."""

    def delete(self, url: str) -> None:
        """Remove an uploaded package (``heron kill``); missing is fine."""
