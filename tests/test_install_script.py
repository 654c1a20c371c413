"""``scripts/install-test-deps.sh`` (run by the README's test command): a Debian package
the suite needs that cannot be installed stops it with a message naming the package,
never a run in which that package's tests would have nothing to run on. ``dpkg`` and
``apt-get`` are stand-ins on PATH here: dpkg says the one package is missing, apt-get
fails as it does without a network."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "install-test-deps.sh"

pytestmark = pytest.mark.timeout(60)

DPKG = """#!/bin/sh
# dpkg -s PACKAGE...: installed unless one of them is missing here
for p in "$@"; do
    case "$p" in "$MISSING"|slurm-wlm-emulator) exit 1 ;; esac
done
exit 0
"""
APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$APT_LOG"
case "$1" in update) exit 0 ;; esac
echo "E: Unable to locate package" >&2
exit 100
"""


def run_with_missing(tmp_path: Path, missing: str) -> subprocess.CompletedProcess:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, body in (("dpkg", DPKG), ("apt-get", APT_GET)):
        (stubs / name).write_text(body)
        (stubs / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", "MISSING": missing,
           "APT_LOG": str(tmp_path / "apt.log"),
           "HERON_POLICY_RC": str(tmp_path / "policy-rc.d")}
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=50)


@pytest.mark.skipif(os.geteuid() != 0, reason="the script installs through sudo otherwise")
@pytest.mark.parametrize("missing, named", [
    ("zookeeper", "ZooKeeper (Debian package(s): zookeeper)"),
    ("slurmd", "Slurm (Debian package(s): slurmctld slurmd slurm-client munge)"),
    ("iproute2", "iproute2 (Debian package(s): iproute2)"),
    ("chromium", "Chromium (Debian package(s): chromium)"),
    ("redis-server", "Redis (Debian package(s): redis-server)"),
])
def test_a_package_that_cannot_be_installed_fails_the_run_naming_it(tmp_path, missing, named):
    result = run_with_missing(tmp_path, missing)
    assert result.returncode == 1, result.stderr
    assert f"the test suite needs {named}, which could not be installed" in result.stderr
    assert f" {missing}" in (tmp_path / "apt.log").read_text()
    assert not (tmp_path / "policy-rc.d").exists()  # the no-services policy is removed


@pytest.mark.skipif(os.geteuid() != 0, reason="the script installs through sudo otherwise")
def test_nothing_is_installed_when_everything_is_there(tmp_path):
    result = run_with_missing(tmp_path, "nothing-is-missing")
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "apt.log").exists()
