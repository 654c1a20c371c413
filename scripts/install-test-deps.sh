#!/usr/bin/env bash
# Installs the Debian packages the test suite needs, or fails naming the one it could not
# install: gcc and the Python headers (the compiled tuple path), ZooKeeper, Redis (the
# connectors' tests), Slurm, iproute2 (the Slurm nodes' network namespaces) and Chromium
# (the pages' browser tests).
# scripts/test.sh runs it first; the suite then fails, never skips, a test for want of
# one of them (HERON_TEST_REQUIRE_ALL=1, tests/unavailable.py).
# Usage: bash scripts/install-test-deps.sh
set -euo pipefail

ME="scripts/install-test-deps.sh"
# where the no-services policy goes while apt-get runs (a test points it elsewhere)
POLICY_RC="${HERON_POLICY_RC:-/usr/sbin/policy-rc.d}"

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
        echo "$ME: no apt-get to install $what" >&2
        return 99
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "$ME: $what is not installed and there is no sudo" >&2
            return 99
        fi
    fi
    local policy="$POLICY_RC" placed_policy=""
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
        echo "$ME: could not install $what (apt-get exit $rc)" >&2
    fi
    return "$rc"
}

# require WHAT PACKAGE...: apt_install, and stop here naming the packages when that fails
# for any reason (no apt-get, neither root nor sudo, apt-get's own failure).
require() {
    local what="$1"
    shift
    local rc=0
    apt_install "$what" "$@" || rc=$?
    if [ "$rc" -ne 0 ]; then
        local packages="" arg
        for arg in "$@"; do
            case "$arg" in -*) ;; *) packages="$packages $arg" ;; esac
        done
        echo "$ME: the test suite needs $what (Debian package(s):$packages), which" \
             "could not be installed; install it and run again" >&2
        exit 1
    fi
}

installed() {
    dpkg -s "$@" >/dev/null 2>&1
}

# The compiled tuple path (engine/common/codec, engine/instance, engine/stmgr) is built by scripts/test.sh's pip install
# from Cython's C with gcc and the Python headers.
if ! command -v gcc >/dev/null 2>&1 || \
        ! python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    require "gcc and the Python headers" gcc python3-dev
fi

# The ZooKeeper state manager's tests run a real server from Debian's zookeeper jars
# (tests/zookeeper_server.py starts its own on a free port).
if [ ! -f /usr/share/java/zookeeper.jar ] || ! installed zookeeper; then
    require ZooKeeper zookeeper
fi

# The Redis connectors' tests (compat.connectors: RedisStreamSpout, RedisSink) run a real
# server from Debian's redis-server (tests/redis_server.py starts its own on a free port;
# apt_install's no-services policy keeps the package's own service from starting).
if ! command -v redis-server >/dev/null 2>&1 || ! installed redis-server; then
    require Redis redis-server
fi

# The cluster tests (tests/cluster/) build a real three-node Slurm cluster with Debian's
# daemons, started by hand by tests/slurm/, each node in a network namespace made with
# iproute2's `ip`. --no-install-recommends keeps out ~40 unrelated packages. Never
# slurm-wlm-emulator: it switches the slurmd/slurmstepd alternatives to a front-end build
# on which multi-node steps hang.
if ! installed slurmctld slurmd slurm-client munge; then
    require Slurm --no-install-recommends slurmctld slurmd slurm-client munge
fi
if ! installed iproute2 || ! command -v ip >/dev/null 2>&1; then
    require iproute2 --no-install-recommends iproute2
fi
if installed slurm-wlm-emulator; then
    echo "$ME: slurm-wlm-emulator is installed, and the Slurm cluster tests cannot run" \
         "with it: apt-get remove slurm-wlm-emulator" >&2
    exit 1
fi

# The pages' browser tests (the conformance report, the tracker's UI) load them in
# Debian's headless Chromium.
if [ ! -x /usr/bin/chromium ] || ! installed chromium; then
    require Chromium chromium
fi
