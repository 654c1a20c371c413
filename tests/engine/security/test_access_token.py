"""The per-user access token (engine/common/security/access_token.py): made on first use
owner-only (0600 in a 0700 home), the same for every process that asks, refused in one
line naming the file (never its content) when unsafe or damaged."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from engine.common.security.access_token import (
    AccessTokenError,
    bearer,
    home_of_working_dir,
    load_or_create,
    matches,
    token_path,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_token_is_made_owner_only_on_first_use_and_then_kept(tmp_path):
    home = tmp_path / "new" / "home"
    token = load_or_create(home)
    path = token_path(home)
    assert (mode(home), mode(path)) == (0o700, 0o600)
    assert len(token) >= 43 and path.read_text() == token + "\n"
    assert load_or_create(home) == token
    assert os.listdir(home) == ["access-token"]  # no staging file left behind


def test_processes_making_it_at_once_agree(tmp_path):
    home = tmp_path / "home"
    got: list[str] = []
    threads = [threading.Thread(target=lambda: got.append(load_or_create(home)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(got) == 8 and len(set(got)) == 1


@pytest.mark.parametrize("content, chmod, expected", [
    ("x" * 43, 0o640, "file has mode 0640"),
    ("short", 0o600, "not an access token"),
    ("has spaces in it " * 4, 0o600, "not an access token"),
])
def test_an_unsafe_or_damaged_token_file_is_refused_naming_it(tmp_path, content, chmod,
                                                              expected):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    path = token_path(home)
    path.write_text(content)
    path.chmod(chmod)
    with pytest.raises(AccessTokenError) as info:
        load_or_create(home)
    assert str(path) in str(info.value) and expected in str(info.value)
    assert content not in str(info.value)


def test_a_symlinked_token_file_is_refused(tmp_path):
    home = tmp_path / "home"
    real = load_or_create(tmp_path / "elsewhere")
    home.mkdir(mode=0o700)
    token_path(home).symlink_to(token_path(tmp_path / "elsewhere"))
    with pytest.raises(AccessTokenError, match="symbolic link"):
        load_or_create(home)
    assert real


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to uid 65534 needs root")
def test_a_token_file_another_user_owns_is_refused(tmp_path):
    home = tmp_path / "home"
    load_or_create(home)
    os.chown(token_path(home), 65534, 65534)
    with pytest.raises(AccessTokenError, match="owned by uid 65534"):
        load_or_create(home)


def test_comparing_and_reading_the_header():
    assert matches("a" * 43, "a" * 43) and not matches("a" * 43, "a" * 42 + "b")
    assert not matches("a" * 43, None) and not matches("a" * 43, "")
    assert not matches("a" * 43, "é" * 43)
    assert bearer("Bearer abc") == "abc" and bearer("bearer  abc ") == "abc"
    assert bearer("Basic abc") is None and bearer(None) is None and bearer("Bearer") is None


def test_a_topologys_processes_find_the_home_it_was_submitted_from(tmp_path, monkeypatch):
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "env-home"))
    assert home_of_working_dir(tmp_path / "h" / "topologies" / "wc") == tmp_path / "h"
    assert home_of_working_dir(tmp_path / "project" / "logs" / "wc-heron-1") == \
        tmp_path / "env-home"
