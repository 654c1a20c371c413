"""The tracker's and the UI's access token (engine/common/security/access_token.py,
engine/tools/ui/auth.py): a request without it, with a wrong one, or from another local user
gets a 401 and no data, and is counted; the one-time link sets an HttpOnly cookie and
redirects to the clean URL; `heron tracker` prints the link and logs no token."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from engine.common.launch import StateManagerSpec
from engine.messages import topology_pb2
from engine.tools.ui.app import create_ui_app
from engine.tools.ui.auth import REFUSED_DETAIL
from tests.engine.tracker.conftest import TOKEN, client, tracker_app, wait_until

pytestmark = pytest.mark.timeout(60)
REPO = Path(__file__).resolve().parents[3]
SECRET_NAME = "secret_topology_name"
NOBODY = 65534


@pytest.fixture
def state_spec(tmp_path) -> StateManagerSpec:
    """A local state tree holding one topology (the data a refused request must not see)."""
    spec = StateManagerSpec(kind="local", root=str(tmp_path / "state"))
    with spec.open() as state:
        state.create("topologies", SECRET_NAME,
                     topology_pb2.Topology(id=f"{SECRET_NAME}-1", name=SECRET_NAME))
    return spec


def refused(answer) -> bool:
    """A 401 that says what to do and holds nothing else."""
    return (answer.status_code == 401 and answer.json() == {"detail": REFUSED_DETAIL}
            and SECRET_NAME not in answer.text and TOKEN not in answer.text)


def test_requests_without_the_token_or_with_a_wrong_one_are_401_and_counted(state_spec):
    with TestClient(tracker_app(state_spec), follow_redirects=False) as http:
        attempts = [
            http.get("/topologies"),
            http.get("/topologies/info", params={"topology": SECRET_NAME}),
            http.get("/topologies", headers={"Authorization": "Bearer wrong-" + TOKEN[6:]}),
            http.get("/topologies", headers={"Authorization": f"Basic {TOKEN}"}),
            http.get("/topologies", headers={"Authorization": f"Bearer {TOKEN[:-1]}"}),
            http.get("/topologies", headers={"Cookie": "heron_token_0=" + "x" * 43}),
            http.get("/topologies", params={"token": "not-it"}),
            http.get("/ui/"), http.get("/static/heron-ui.js"), http.get("/openapi.json"),
            http.get("/docs"), http.get("/health"),
        ]
        assert all(refused(a) for a in attempts), [(a.status_code, a.text) for a in attempts]
        assert attempts[0].headers["www-authenticate"] == 'Bearer realm="heron"'
        ok = http.get("/topologies", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and SECRET_NAME in ok.text
        health = http.get("/health", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        assert health == {"status": "ok", "requests_refused": len(attempts)}


def test_the_link_sets_an_httponly_cookie_and_redirects_to_the_clean_url(state_spec):
    with TestClient(tracker_app(state_spec), follow_redirects=False) as http:
        answer = http.get(f"/ui/topologies/{SECRET_NAME}",
                          params={"window": "60", "token": TOKEN})
        assert answer.status_code == 303
        assert answer.headers["location"] == f"/ui/topologies/{SECRET_NAME}?window=60"
        cookie = answer.headers["set-cookie"]
        assert cookie.startswith("heron_token_")
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
        odd = http.get("/ui/topologies/a%20b%2Fc", params={"token": TOKEN})
        assert odd.status_code == 303 and odd.headers["location"] == "/ui/topologies/a%20b%2Fc"
        name, _, value = cookie.split(";")[0].partition("=")
        fresh = TestClient(http.app, follow_redirects=False)
        page = fresh.get(f"/ui/topologies/{SECRET_NAME}", headers={"Cookie": f"{name}={value}"})
        assert page.status_code == 200 and "<html" in page.text.lower()
        api = fresh.get("/topologies", headers={"Cookie": f"{name}={value}"})
        assert api.status_code == 200 and SECRET_NAME in api.text


def test_heron_ui_checks_the_token_and_sends_it_to_the_tracker(state_spec, serve):
    tracker = serve(tracker_app(state_spec))
    ui = serve(create_ui_app(tracker.url, token=TOKEN, timeout=5))
    with client(ui.url, token=None) as http:
        assert refused(http.get("/topologies")) and refused(http.get("/ui/"))
    with client(ui.url) as http:
        answer = http.get("/topologies")
        assert answer.status_code == 200 and SECRET_NAME in answer.text
    # a UI of another home: the tracker refuses what it forwards, and that 401 is passed on
    stranger = serve(create_ui_app(tracker.url, token="another-users-token-" + "y" * 30))
    with client(stranger.url, token="another-users-token-" + "y" * 30) as http:
        assert refused(http.get("/topologies"))


def test_heron_tracker_prints_the_link_and_logs_no_token(tmp_path, state_spec):
    home = tmp_path / "home"
    err = tmp_path / "tracker.err"
    out = tmp_path / "tracker.out"
    with open(err, "w") as stderr, open(out, "w") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.tools.cli.main", "tracker", "--port", "0",
             "--home", str(home), "--state-root", state_spec.root],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=stdout,
            stderr=stderr, start_new_session=True)
    try:
        found = wait_until(lambda: re.search(r"open: (http://127\.0\.0\.1:\d+)/ui/\?token=(\S+)",
                                             out.read_text()), 30)
        assert found, (out.read_text(), err.read_text())
        url, token = found.group(1), found.group(2)
        token_file = home / "access-token"
        assert token == token_file.read_text().strip()
        assert (os.stat(token_file).st_mode & 0o777, os.stat(home).st_mode & 0o777) == \
            (0o600, 0o700)
        with client(url, token=None) as http:
            assert wait_until(lambda: http.get("/health").status_code == 401, 10)
            assert refused(http.get("/topologies", params={"token": token[:-2] + "zz"}))
            link = http.get("/ui/", params={"token": token})
            assert link.status_code == 303 and link.headers["location"] == "/ui/"
        with client(url, token=token) as http:
            assert SECRET_NAME in http.get("/topologies").text
            assert http.get("/health").json()["requests_refused"] == 2
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0, err.read_text()
        log = err.read_text()
        assert "refused a request without a valid access token" in log
        assert token not in log and "token=" not in log, log
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_a_token_file_others_can_read_is_one_line_exit_2(tmp_path):
    from click.testing import CliRunner

    from engine.tools.cli.main import main

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    token_file = home / "access-token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o644)
    for command in (["tracker", "--port", "0", "--state-root", str(tmp_path / "state")],
                    ["ui", "--port", "0"], ["open", "x"]):
        result = CliRunner().invoke(main, [*command, "--home", str(home)])
        assert result.exit_code == 2, (command, result.output)
        assert result.output == (f"heron: error: access token {token_file}: file has mode "
                                 f"0644; other users can reach it. The engine needs it "
                                 f"owner-only (0700 for a directory, 0600 for a file): chmod "
                                 f"go-rwx {token_file}\n"), result.output
        assert TOKEN not in result.output


@pytest.mark.skipif(os.geteuid() != 0, reason="becoming uid 65534 needs root")
def test_another_user_can_neither_read_the_token_nor_get_data(tmp_path, state_spec, serve):
    from engine.common.security.access_token import load_or_create
    from engine.tools.tracker import TrackerSettings, create_app

    home = tmp_path / "home"
    token_file = home / "access-token"
    token = load_or_create(home)
    # no token given: the app takes the one of its settings' home
    served = serve(create_app(state_spec, TrackerSettings(tm_timeout=1.5, home=home)))
    with client(served.url, token=token) as http:
        assert SECRET_NAME in http.get("/topologies").text
    tmp_path.chmod(0o711)  # others may traverse down to the home, as /home/<user> often allows
    probe = textwrap.dedent(f"""
        import encodings.idna, json, os, urllib.error, urllib.request
        # every module it needs is loaded first: root's Python is not readable by 65534
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        os.setgroups([]); os.setresgid({NOBODY}, {NOBODY}, {NOBODY})
        os.setresuid({NOBODY}, {NOBODY}, {NOBODY})
        out = {{}}
        try:
            out["token"] = open({str(token_file)!r}).read()
        except OSError as exc:
            out["token_error"] = type(exc).__name__
        for name, headers in (("none", {{}}), ("guess", {{"Authorization": "Bearer guess"}})):
            try:
                with opener.open(urllib.request.Request({served.url + "/topologies"!r},
                                                        headers=headers), timeout=10) as a:
                    out[name] = [a.status, a.read().decode()]
            except urllib.error.HTTPError as exc:
                out[name] = [exc.code, exc.read().decode()]
        print(json.dumps(out))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=30, cwd="/")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "token" not in seen and seen["token_error"] == "PermissionError", seen
    for name in ("none", "guess"):
        status, body = seen[name]
        assert status == 401 and json.loads(body) == {"detail": REFUSED_DETAIL}, seen
        assert SECRET_NAME not in body


def test_a_browser_is_given_the_link_through_an_owner_only_page_not_argv(tmp_path,
                                                                        monkeypatch):
    """A command line is visible to every user (ps): the browser gets a file:// page."""
    import webbrowser

    from engine.tools.cli.serving import link, open_link

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    monkeypatch.setenv("HERON_RUNTIME_DIR", str(tmp_path / "runtime"))
    target = link("http://127.0.0.1:8888", "/ui/topologies/wc", TOKEN)
    assert open_link(target) is True
    [url] = opened
    assert url.startswith("file://") and TOKEN not in url
    page = Path(url.removeprefix("file://"))
    assert os.stat(page).st_mode & 0o777 == 0o600
    assert f'content="0;url={target}"' in page.read_text()
