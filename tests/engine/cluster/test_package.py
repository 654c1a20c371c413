"""The topology package: what goes in, what stays out, and a node that refuses a package
whose SHA-256 or engine version is not the submitter's, leaving nothing unpacked."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile
import threading
from pathlib import Path

import pytest

from engine.common.cluster.package import (
    MANIFEST,
    PackageError,
    build_package,
    engine_version,
    unpack_package,
)
from engine.uploader import HttpUploader, LocalFsUploader, fetch

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"


def names(archive: Path) -> set[str]:
    with tarfile.open(archive) as tar:
        return {m.name for m in tar.getmembers() if m.isfile()}


def test_the_package_holds_the_project_and_nothing_else(tmp_path):
    package = build_package(WORDCOUNT, {"topology": "wordcount"}, tmp_path / "out")
    inside = names(package.path)
    assert {MANIFEST, "topologies/wordcount.py", "src/spouts/words.py", "src/bolts/wordcount.py",
            "config.json", "virtualenvs/wordcount.txt"} <= inside
    assert not [n for n in inside if n.startswith("logs/") or "__pycache__" in n
                or n.endswith(".pyc")]
    assert package.sha256 == hashlib.sha256(package.path.read_bytes()).hexdigest()
    assert not list((tmp_path / "out").glob(".*"))  # no temporary file left


def test_unpack_checks_the_hash_first_and_returns_the_manifest(tmp_path):
    package = build_package(WORDCOUNT, {"topology": "wordcount", "options": {"a": 1}},
                            tmp_path / "out")
    manifest = unpack_package(package.path, package.sha256, tmp_path / "node")
    assert manifest["options"] == {"a": 1}
    assert manifest["engine_version"] == engine_version()
    assert (tmp_path / "node" / "topologies" / "wordcount.py").read_text() == \
        (WORDCOUNT / "topologies" / "wordcount.py").read_text()
    with pytest.raises(PackageError, match="SHA-256 mismatch: expected 0+, got "):
        unpack_package(package.path, "0" * 64, tmp_path / "node2")
    assert not (tmp_path / "node2").exists()


def _archive(tmp_path: Path, manifest: dict, extra=()) -> Path:
    path = tmp_path / "crafted.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for member in extra:
            tar.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    return path


def test_a_package_from_another_engine_version_is_refused_naming_both(tmp_path):
    path = _archive(tmp_path, {"engine_version": "0.0.1+src.000000000000"})
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(PackageError, match=r"packed by engine version 0.0.1\+src.0+, but this "
                                           r"node runs "):
        unpack_package(path, digest, tmp_path / "node")
    assert not (tmp_path / "node").exists()


def test_links_and_paths_outside_are_refused(tmp_path):
    link = tarfile.TarInfo("src/evil")
    link.type = tarfile.SYMTYPE
    link.linkname = "/etc/passwd"
    path = _archive(tmp_path, {"engine_version": engine_version()}, [link])
    with pytest.raises(PackageError, match="'src/evil' is not a regular file"):
        unpack_package(path, hashlib.sha256(path.read_bytes()).hexdigest(), tmp_path / "n1")
    escape = tarfile.TarInfo("../outside.txt")
    escape.size = 1
    path = _archive(tmp_path, {"engine_version": engine_version()}, [escape])
    with pytest.raises(PackageError):
        unpack_package(path, hashlib.sha256(path.read_bytes()).hexdigest(), tmp_path / "n2")
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "n2").exists()


def test_localfs_upload_and_fetch(tmp_path):
    package = build_package(WORDCOUNT, {"topology": "wordcount"}, tmp_path / "out")
    url = LocalFsUploader(tmp_path / "shared").upload(package, "wordcount-abc")
    assert url.startswith("file://") and url.endswith("/shared/wordcount-abc.tar.gz")
    fetched = fetch(url, tmp_path / "node" / "p.tar.gz")
    assert hashlib.sha256(fetched.read_bytes()).hexdigest() == package.sha256


class _PutServer(http.server.BaseHTTPRequestHandler):
    store: dict[str, bytes] = {}

    def do_PUT(self):  # noqa: N802 - http.server's naming
        self.store[self.path] = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(201)
        self.end_headers()

    def do_GET(self):  # noqa: N802
        data = self.store.get(self.path)
        if data is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_http_upload_and_fetch(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _PutServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        package = build_package(WORDCOUNT, {"topology": "wordcount"}, tmp_path / "out")
        base = f"http://127.0.0.1:{server.server_address[1]}/packages"
        url = HttpUploader(base).upload(package, "wordcount-abc")
        assert url == f"{base}/wordcount-abc.tar.gz"
        fetched = fetch(url, tmp_path / "node" / "p.tar.gz")
        assert hashlib.sha256(fetched.read_bytes()).hexdigest() == package.sha256
        with pytest.raises(PackageError, match="404"):
            fetch(f"{base}/missing.tar.gz", tmp_path / "node" / "q.tar.gz")
        assert not (tmp_path / "node" / "q.tar.gz").exists()
    finally:
        server.shutdown()
        server.server_close()
