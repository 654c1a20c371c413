#!/usr/bin/env bash
# Installs everything the test suite needs, then runs the whole suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install WHAT PACKAGE... installs Debian packages with apt-get (through sudo when
# not root), runs 'apt-get update' once per run, and starts no service: a policy-rc.d
# that exits 101 is in place during the install (when the machine has none), because the
# tests bring their own servers and a system one would hold their ports and outlive the
# run. Returns 0 when installed, 99 when it cannot try here (no apt-get, not root and no
# sudo), apt-get's exit code when apt-get failed (saying which).
apt_updated=""
apt_install() {
    local what="$1"
    shift
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "scripts/test.sh: no apt-get to install $what" >&2
        return 99
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "scripts/test.sh: $what is not installed and there is no sudo" >&2
            return 99
        fi
    fi
    local policy=/usr/sbin/policy-rc.d placed_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
        $sudo chmod 755 "$policy"
        placed_policy=1
    fi
    local rc=0
    if [ -z "$apt_updated" ]; then
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || rc=$?
        [ "$rc" -eq 0 ] && apt_updated=1
    fi
    if [ "$rc" -eq 0 ]; then
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" || rc=$?
    fi
    if [ -n "$placed_policy" ]; then
        $sudo rm -f "$policy"
    fi
    if [ "$rc" -ne 0 ]; then
        echo "scripts/test.sh: could not install $what (apt-get exit $rc)" >&2
    fi
    return "$rc"
}

# The compiled tuple path (engine/fastpath, issue 20) is built by the install below from
# Cython's C with gcc and the Python headers. Install them when missing: without them the
# install still succeeds on the pure-Python path, which the suite refuses (see below).
if ! command -v gcc >/dev/null 2>&1 || \
        ! python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    rc=0
    apt_install "gcc and python3-dev" gcc python3-dev || rc=$?
    if [ "$rc" -eq 99 ]; then
        echo "scripts/test.sh: install gcc and the Python headers, or the compiled tuple" \
             "path cannot be built (the tests that require it will fail)" >&2
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
fi

python3 -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'

# The suite runs the compiled tuple path: a missing or stale build fails the tests that
# use it (never a skip); tests/engine/fastpath runs the pure-Python path beside it.
export HERON_REQUIRE_COMPILED=1

# The ZooKeeper state manager's tests run a real server from Debian's zookeeper jars
# (tests/zookeeper_server.py starts its own on a free port). Install them when missing.
if [ ! -f /usr/share/java/zookeeper.jar ] || ! dpkg -s zookeeper >/dev/null 2>&1; then
    rc=0
    apt_install ZooKeeper zookeeper || rc=$?
    if [ "$rc" -eq 99 ]; then
        echo "scripts/test.sh: install ZooKeeper 3.8 jars at /usr/share/java/zookeeper.jar" \
             "or the ZooKeeper tests will be skipped" >&2
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
fi

# The cluster tests (tests/cluster/) build a real three-node Slurm cluster with Debian's
# daemons, started by hand by tests/slurm/. --no-install-recommends keeps out
# ~40 unrelated packages. Never slurm-wlm-emulator: it switches the slurmd/slurmstepd
# alternatives to a front-end build on which multi-node steps hang.
if ! dpkg -s slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
    rc=0
    apt_install Slurm --no-install-recommends slurmctld slurmd slurm-client munge || rc=$?
    if [ "$rc" -eq 99 ]; then
        echo "scripts/test.sh: the Slurm cluster tests will be skipped" >&2
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
fi
if dpkg -s slurm-wlm-emulator >/dev/null 2>&1; then
    echo "scripts/test.sh: slurm-wlm-emulator is installed; the Slurm cluster tests will" \
         "be skipped (apt-get remove slurm-wlm-emulator)" >&2
fi

# The conformance report's browser test loads the HTML page in Debian's headless
# Chromium (tests/conformance/test_report_browser.py; skipped with the reason without it).
if [ ! -x /usr/bin/chromium ]; then
    apt_install chromium chromium || \
        echo "scripts/test.sh: the report's browser test will be skipped" >&2
fi

# Two cores: run the suite in one process; tests bound their own run time.
exec python3 -m pytest "$@"
