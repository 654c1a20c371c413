"""The ``http`` uploader (Heron's HttpUploader): the package is PUT to
``heron.uploader.http.uri`` and handed out as that URL."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

from engine.common.cluster.package import Package, PackageError
from engine.spi import Uploader
from engine.uploader.fetch import TRANSFER_TIMEOUT_SECS


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
