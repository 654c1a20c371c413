"""`heron tracker`, `heron ui` and `heron open`: a real tracker process that serves and
stops on SIGTERM, loopback unless --allow-remote, the UI server forwarding to a tracker,
and opening the page of a running topology."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.common.security.private import write_private_file
from engine.tools.cli.main import main
from engine.tools.cli.serving import is_loopback
from engine.tools.ui.app import create_ui_app
from tests.engine.tracker.conftest import NAME, TOKEN, client, page_link, tracker_app, wait_until

pytestmark = pytest.mark.timeout(90)
REPO = Path(__file__).resolve().parents[3]


def heron(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def home_with_token(home: Path) -> Path:
    """A Heron home whose access token is the tests' TOKEN."""
    write_private_file(home / "access-token", (TOKEN + "\n").encode())
    return home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def tracker_process(tmp_path: Path, *args: str):
    """`heron tracker --port 0 ARGS` in its own process group: yields (process, its URL,
    its stderr file), and is killed at the end if the test did not stop it."""
    log = tmp_path / "tracker.err"
    home = tmp_path / "home"
    if not (home / "access-token").exists():
        home_with_token(home)
    env = {**os.environ, "HERON_HOME": str(home), "PYTHONPATH": str(REPO)}
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "engine.tools.cli.main", "tracker",
                                 "--port", "0", *args], cwd=REPO, env=env,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        found = wait_until(lambda: re.search(r"serving on (http://127\.0\.0\.1:\d+)",
                                             log.read_text()), 30)
        assert found, f"no 'serving on' line: {log.read_text()}"
        yield proc, found.group(1), log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_heron_tracker_serves_the_api_and_the_page_and_stops_on_sigterm(tmp_path):
    with tracker_process(tmp_path, "--poll-interval", "1") as (proc, url, log):
        assert f"local {tmp_path / 'home' / 'state'}" in log.read_text()
        with client(url) as http:
            assert wait_until(lambda: http.get("/health").status_code == 200, 10)
            assert http.get("/topologies").json() == {}
            assert http.get("/ui/").status_code == 200
            assert "/topologies/metrics" in http.get("/openapi.json").json()["paths"]
            missing = http.get("/topologies/info", params={"topology": "nope"})
            assert missing.status_code == 404 and "no topology named 'nope'" in missing.text
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, log.read_text()


def test_serving_beyond_loopback_needs_allow_remote(tmp_path):
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.3.4.5") and not is_loopback("0.0.0.0")
    assert not is_loopback("192.0.2.7") and not is_loopback("example.org")
    for command in (["tracker", "--state-root", str(tmp_path)], ["ui"]):
        result = heron(*command, "--host", "0.0.0.0", "--port", "0")
        assert result.exit_code == 2, result.output
        assert "refusing to serve on 0.0.0.0" in result.output and "--allow-remote" in result.output
    result = heron("tracker", "--state-manager", "zookeeper")
    assert result.exit_code == 2 and "needs --zk HOST:PORT" in result.output
    result = heron("ui", "--tracker", "127.0.0.1:8888")
    assert result.exit_code == 2 and "http://" in result.output


def test_a_port_in_use_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = heron("tracker", "--state-root", str(tmp_path), "--port", str(port))
    assert result.exit_code == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.output


def test_heron_ui_forwards_to_the_tracker_and_names_a_tracker_that_is_down(local_topology, serve):
    tracker = serve(tracker_app(local_topology.state_spec))
    ui = serve(create_ui_app(tracker.url, token=TOKEN, timeout=5))
    with client(ui.url) as http:
        page = http.get(f"/ui/topologies/{NAME}")
        assert page.status_code == 200 and "content-security-policy" in page.headers
        plan = http.get("/topologies/logicalplan", params={"topology": NAME})
        assert plan.status_code == 200 and "sentence_spout" in plan.json()["spouts"]
        metrics = http.get("/topologies/metrics", params={"topology": NAME, "interval": "30"})
        assert metrics.status_code == 200 and metrics.json()["interval"] == 30
        bad = http.get("/topologies/metrics", params={"topology": NAME, "interval": "x"})
        assert bad.status_code == 422 and "parameter 'interval'" in bad.json()["detail"]
        assert http.get("/topologies/info", params={"topology": "nope"}).status_code == 404
    dead = f"http://127.0.0.1:{free_port()}"
    orphan = serve(create_ui_app(dead, token=TOKEN, timeout=2))
    with client(orphan.url) as http:
        answer = http.get("/topologies")
        assert answer.status_code == 502 and f"the tracker at {dead} did not answer" in answer.text
        assert http.get("/ui/").status_code == 200  # the page itself still loads


def test_heron_open_names_the_page_of_a_running_topology(local_topology, serve, tmp_path):
    tracker = serve(tracker_app(local_topology.state_spec))
    home = str(home_with_token(tmp_path / "home"))
    result = heron("open", NAME, "--url", tracker.url, "--print-only", "--home", home)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == page_link(tracker.url, f"/ui/topologies/{NAME}")
    unknown = heron("open", "nope", "--url", tracker.url, "--print-only", "--home", home)
    assert unknown.exit_code == 2 and "no topology named 'nope'" in unknown.output
    other = heron("open", NAME, "--url", tracker.url, "--home", str(tmp_path / "other"))
    assert other.exit_code == 1 and "refused the access token" in other.output
    began = time.monotonic()
    nobody = heron("open", NAME, "--url", f"http://127.0.0.1:{free_port()}", "--print-only",
                   "--home", home)
    assert nobody.exit_code == 1 and "no tracker answers at" in nobody.output
    assert "heron tracker" in nobody.output and time.monotonic() - began < 15


def test_heron_tracker_cluster_reads_the_clusters_zookeeper(tmp_path, zookeeper):
    """`heron tracker --cluster C` tracks what HOME/conf/C/statemgr.yaml names: here a
    topology stored in that ZooKeeper tree, under its digest ACL, is listed."""
    import uuid

    from engine.common.launch import StateManagerSpec
    from engine.messages import topology_pb2

    home = tmp_path / "home"
    conf = home / "conf" / "zkc"
    conf.mkdir(parents=True)
    digest = tmp_path / "zk-auth"
    digest.write_text("heron:tracker-test\n")
    digest.chmod(0o600)
    root = f"/heron-tracker-{uuid.uuid4().hex[:8]}"
    (conf / "statemgr.yaml").write_text(
        "heron.class.state.manager: zookeeper\n"
        f"heron.statemgr.connection.string: {zookeeper.hosts}\n"
        f"heron.statemgr.root.path: {root}\n"
        f"heron.statemgr.zookeeper.auth.file: {digest}\n")
    with StateManagerSpec(kind="zookeeper", zk_hosts=zookeeper.hosts, zk_root=root,
                          zk_auth_file=str(digest)).open() as state:
        state.create("topologies", "on_zk", topology_pb2.Topology(id="on_zk-1", name="on_zk"))
    with tracker_process(tmp_path, "--cluster", "zkc") as (proc, url, log):
        assert f"zookeeper {zookeeper.hosts}{root}" in log.read_text()
        with client(url) as http:
            assert "on_zk" in str(http.get("/topologies").json())
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, log.read_text()
    missing = heron("tracker", "--home", str(home), "--cluster", "nowhere", "--port", "0")
    assert missing.exit_code == 2 and "no cluster 'nowhere'" in missing.output
    both = heron("tracker", "--home", str(home), "--cluster", "zkc", "--zk", zookeeper.hosts)
    assert both.exit_code == 2 and "drop --state-manager/--zk" in both.output
