"""Owner-only paths (docs/security.md): the runtime root, the heron home, the local state
tree and a topology's working directory are created 0700 with 0600 files, and one that
another user owns or can write is refused with UnsafePathError naming it (the CLI: one
line, exit 2). Another local user (uid 65534, dropped to in a subprocess) can read none of
what the engine keeps."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.network.endpoints import ipc_dir
from engine.common.security.private import UnsafePathError, runtime_root
from engine.messages import tmanager_pb2, topology_pb2
from engine.statemgr import LocalFileSystemStateManager
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"
NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0,
                                reason="giving a directory to uid 65534 or becoming it needs root")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def nobodys_dir(tmp_path):
    """A directory owned by uid 65534 (another local user)."""
    path = tmp_path / "theirs"
    path.mkdir(mode=0o700)
    os.chown(path, NOBODY, NOBODY)
    return path


# -- the runtime root ------------------------------------------------------------------------
@needs_root
def test_a_runtime_dir_owned_by_another_user_is_refused_naming_it(nobodys_dir, monkeypatch):
    monkeypatch.setenv("HERON_RUNTIME_DIR", str(nobodys_dir))
    for attempt in (runtime_root, lambda: ipc_dir("wordcount-0123456789ab")):
        with pytest.raises(UnsafePathError) as info:
            attempt()
        assert str(nobodys_dir) in str(info.value)
        assert f"owned by uid {NOBODY}" in str(info.value)
    assert os.listdir(nobodys_dir) == []  # nothing was created in it


@needs_root
def test_heron_run_exits_2_naming_a_runtime_dir_another_user_owns(nobodys_dir, tmp_path):
    env = {**os.environ, "HERON_RUNTIME_DIR": str(nobodys_dir)}
    result = subprocess.run(
        [sys.executable, "-m", "engine.tools.cli.main", "run", str(WORDCOUNT), "--time", "2",
         "--log-dir", str(tmp_path / "logs"), "-o", "wordcount.max_words=100"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=50)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"heron: error: {nobodys_dir}: directory is owned by uid {NOBODY}" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    # refused before any process started: no executor ever wrote a log
    logs = list((tmp_path / "logs").glob("*/logs/*.log"))
    assert logs == [], logs


@needs_root
def test_heron_submit_exits_2_naming_a_runtime_dir_another_user_owns(nobodys_dir, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setenv("HERON_RUNTIME_DIR", str(nobodys_dir))
    result = heron("submit", "local", str(WORDCOUNT), "--home", str(tmp_path / "home"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"heron: error: {nobodys_dir}: directory is owned by")
    assert not (tmp_path / "home" / "topologies").exists()  # nothing deployed


def test_a_runtime_dir_others_can_write_is_refused(tmp_path, monkeypatch):
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    monkeypatch.setenv("HERON_RUNTIME_DIR", str(loose))
    with pytest.raises(UnsafePathError, match=f"{loose}: directory has mode 0777"):
        runtime_root()


# -- the local state tree ----------------------------------------------------------------------
def test_the_local_state_tree_is_owner_only(tmp_path):
    root = tmp_path / "home" / "state"
    with LocalFileSystemStateManager(root) as manager:
        manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        manager.create("tmanagers", "wc", tmanager_pb2.TManagerLocation(topology_name="wc"),
                       ephemeral=True)
        assert mode(root) == 0o700
        for kind in ("topologies", "tmanagers"):
            assert mode(root / kind) == 0o700
            for node in (root / kind).iterdir():
                assert mode(node) == 0o600, node


def test_a_state_root_of_ours_nobody_else_can_write_is_tightened(tmp_path):
    root = tmp_path / "state"
    root.mkdir()
    root.chmod(0o755)
    LocalFileSystemStateManager(root).close()
    assert mode(root) == 0o700


@pytest.mark.parametrize("loose", [0o770, 0o757])
def test_a_state_root_others_can_write_is_refused_naming_it(tmp_path, loose):
    root = tmp_path / "state"
    root.mkdir()
    root.chmod(loose)
    with pytest.raises(UnsafePathError, match=f"{root}: directory has mode 0{loose:o}"):
        LocalFileSystemStateManager(root)


@needs_root
def test_a_state_root_another_user_owns_is_refused_naming_it(nobodys_dir):
    with pytest.raises(UnsafePathError, match=f"{nobodys_dir}: directory is owned by uid"):
        LocalFileSystemStateManager(nobodys_dir)


# -- working directories -------------------------------------------------------------------------
def test_a_topology_working_dir_is_owner_only(tmp_path):
    spec = LaunchSpec(topology_name="wc", topology_id="wc-0123456789ab",
                      working_dir=str(tmp_path / "home" / "topologies" / "wc"),
                      submission=Submission(project=str(tmp_path), name="wc"),
                      state=StateManagerSpec(kind="local", root=str(tmp_path / "state")))
    spec.save()
    for directory in (spec.home, spec.log_dir, spec.capture_dir, spec.pid_dir):
        assert mode(directory) == 0o700, directory
    assert mode(spec.path) == 0o600


def test_a_submissions_digest_copy_is_owner_only_and_not_in_the_launch_file(tmp_path):
    from engine.tools.cli.env import Env

    digest = tmp_path / "zk-auth"
    digest.write_text("heron:pw-not-in-launch-json\n")
    digest.chmod(0o600)
    env = Env(tmp_path / "home", "zookeeper", tmp_path / "state", "127.0.0.1:2181", "/heron",
              digest)
    working = tmp_path / "home" / "topologies" / "wc"
    state = env.launch_state_spec(working)
    copy = working / "secrets" / "zk-auth"
    assert state.zk_auth_file == str(copy)
    assert copy.read_text() == "heron:pw-not-in-launch-json"
    assert mode(copy) == 0o600 and mode(copy.parent) == 0o700 and mode(working) == 0o700
    spec = LaunchSpec(topology_name="wc", topology_id="wc-0123456789ab",
                      working_dir=str(working), state=state,
                      submission=Submission(project=str(tmp_path), name="wc"))
    assert "pw-not-in-launch-json" not in spec.save().read_text()


# -- the heron home, through the CLI ---------------------------------------------------------------
def test_the_heron_home_is_created_owner_only(tmp_path):
    home = tmp_path / "new-home"
    result = heron("list", "--home", str(home))
    assert result.exit_code == 0, result.output
    assert mode(home) == 0o700 and mode(home / "state") == 0o700


def test_a_heron_home_others_can_write_is_one_line_exit_2(tmp_path):
    home = tmp_path / "loose-home"
    home.mkdir()
    home.chmod(0o777)
    result = heron("list", "--home", str(home))
    assert result.exit_code == 2
    assert result.output.strip() == (f"heron: error: {home}: directory has mode 0777; other "
                                      f"users can reach it. The engine needs it owner-only "
                                      f"(0700 for a directory, 0600 for a file): chmod go-rwx "
                                      f"{home}")


@needs_root
def test_a_heron_home_another_user_owns_is_one_line_exit_2(nobodys_dir):
    for command in (["list"], ["tracker", "--port", "0", "--no-ui"]):
        result = heron(*command, "--home", str(nobodys_dir))
        assert result.exit_code == 2, (command, result.output)
        assert result.output.startswith(f"heron: error: {nobodys_dir}: directory is owned "
                                        f"by uid {NOBODY}"), result.output
        assert "Traceback" not in result.output


def test_a_loose_zk_auth_file_is_one_line_exit_2(tmp_path):
    digest = tmp_path / "zk-auth"
    digest.write_text("heron:pw\n")
    digest.chmod(0o644)
    result = heron("list", "--home", str(tmp_path / "home"), "--state-manager", "zookeeper",
                   "--zk", "127.0.0.1:1", "--zk-auth", str(digest))
    assert result.exit_code == 2
    assert result.output.startswith(f"heron: error: {digest}: file has mode 0644")
    local = heron("list", "--home", str(tmp_path / "home"), "--zk-auth", str(digest))
    assert (
        local.exit_code == 2 and "--zk-auth goes with the zookeeper state manager" in local.output
    )


# -- another local user ----------------------------------------------------------------------------
@needs_root
def test_another_user_can_read_nothing_the_engine_keeps():
    """With every parent traversable, uid 65534 still cannot list the heron home, the
    state tree or a working directory, nor read a node, a log or the digest's copy."""
    base = Path(tempfile.mkdtemp(prefix="hown-"))
    try:
        base.chmod(0o711)  # others may traverse, as /home/<user> often allows
        home = base / "home"
        result = heron("list", "--home", str(home))
        assert result.exit_code == 0, result.output
        with LocalFileSystemStateManager(home / "state") as manager:
            manager.create("topologies", "wc", topology_pb2.Topology(name="wc"))
        spec = LaunchSpec(topology_name="wc", topology_id="wc-0123456789ab",
                          working_dir=str(home / "topologies" / "wc"),
                          submission=Submission(project=str(base), name="wc"))
        spec.save()
        spec.process_log("stmgr-1").write_text("a log line\n")
        targets = [home, home / "state", home / "state" / "topologies",
                   home / "state" / "topologies" / "wc", spec.home, spec.log_dir,
                   spec.process_log("stmgr-1"), spec.path]
        probe = textwrap.dedent(f"""
            import os, sys
            os.setresgid({NOBODY}, {NOBODY}, {NOBODY})
            os.setgroups([])
            os.setresuid({NOBODY}, {NOBODY}, {NOBODY})
            readable = []
            for path in sys.argv[1:]:
                try:
                    os.listdir(path) if os.path.isdir(path) else open(path, "rb").read()
                    readable.append(path)
                except PermissionError:
                    pass
            print("\\n".join(readable))
        """)
        result = subprocess.run([sys.executable, "-c", probe, *map(str, targets)],
                                capture_output=True, text=True, timeout=20)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "", f"uid {NOBODY} could read: {result.stdout}"
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)
