"""The test-only crash points (engine/common/runtime/crash_points.py): named once, each one called
where its step is, costing nothing when nothing is armed, and, when a test arms one,
killing exactly one process there, as ``kill -9`` would."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from engine.common.runtime.crash_points import CRASH_EXIT, CRASH_FILE_ENV, POINTS

REPO = Path(__file__).resolve().parents[3]


def calls_in_engine() -> dict[str, list[str]]:
    """Every ``crash("<point>", ...)`` call in the engine, by point."""
    found: dict[str, list[str]] = {}
    for path in (REPO / "engine").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "crash" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found.setdefault(node.args[0].value, []).append(
                    f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_every_point_is_called_once_and_every_call_names_a_point():
    calls = calls_in_engine()
    assert set(calls) == set(POINTS), (set(calls) ^ set(POINTS))
    assert all(len(where) == 1 for where in calls.values()), calls


def run_point(
    tmp_path: Path, point: str, who: str, armed: dict | None
) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop(CRASH_FILE_ENV, None)
    if armed is not None:
        arming = tmp_path / "crash.json"
        arming.write_text(json.dumps(armed))
        env[CRASH_FILE_ENV] = str(arming)
    code = ("from engine.common.runtime.crash_points import crash\n"
            f"crash({point!r}, {who!r})\nprint('still here')\n")
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=60)


def test_nothing_armed_nothing_happens(tmp_path):
    done = run_point(tmp_path, "stmgr.restore.mid", "stmgr-1", None)
    assert done.returncode == 0 and "still here" in done.stdout


def test_an_armed_point_kills_one_process_for_its_target_only(tmp_path):
    arm = {"point": "instance.save.after_store", "arm": 3, "where": "files"}
    other = run_point(tmp_path, "instance.save.after_store", "count", arm)
    assert other.returncode == 0  # another component: not its target
    elsewhere = run_point(tmp_path, "instance.save.after_pre_save", "files", arm)
    assert elsewhere.returncode == 0  # another point
    died = run_point(tmp_path, "instance.save.after_store", "files", arm)
    assert died.returncode == CRASH_EXIT and "still here" not in died.stdout
    fired = json.loads((tmp_path / "crash.json.fired-3").read_text())
    assert fired["point"] == "instance.save.after_store" and fired["who"] == "files"
    # the arm is used up: the process started again in its place runs on
    again = run_point(tmp_path, "instance.save.after_store", "files", arm)
    assert again.returncode == 0


def test_an_unknown_point_is_a_programming_error_when_armed(tmp_path):
    done = run_point(tmp_path, "instance.nowhere", "x", {"point": "instance.nowhere", "arm": 1})
    assert done.returncode == 1 and "unknown crash point 'instance.nowhere'" in done.stderr


def test_the_docs_list_every_point():
    docs = (REPO / "docs" / "stateful.md").read_text()
    missing = [point for point in POINTS if f"`{point}`" not in docs]
    assert not missing, f"docs/stateful.md does not list: {missing}"
