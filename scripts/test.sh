#!/usr/bin/env bash
# Installs everything the test suite needs, then runs the whole suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

# The ZooKeeper state manager's tests run a real server from Debian's zookeeper jars
# (tests/zookeeper_server.py starts its own on a free port). Install them when missing.
install_zookeeper() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "scripts/test.sh: zookeeper is not installed and there is no sudo;" \
                 "the ZooKeeper tests will be skipped" >&2
            return 0
        fi
    fi
    # Keep package scripts from starting a system ZooKeeper service on port 2181: the
    # tests bring their own server, and a stray one would outlive the run.
    local policy=/usr/sbin/policy-rc.d placed_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
        $sudo chmod 755 "$policy"
        placed_policy=1
    fi
    local rc=0
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || rc=$?
    if [ "$rc" -eq 0 ]; then
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zookeeper || rc=$?
    fi
    if [ -n "$placed_policy" ]; then
        $sudo rm -f "$policy"
    fi
    return "$rc"
}
if [ ! -f /usr/share/java/zookeeper.jar ] || ! dpkg -s zookeeper >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        install_zookeeper
    else
        echo "scripts/test.sh: no apt-get; install ZooKeeper 3.8 jars at" \
             "/usr/share/java/zookeeper.jar or the ZooKeeper tests will be skipped" >&2
    fi
fi

# The conformance report's browser test loads the HTML page in Debian's headless
# Chromium (tests/conformance/test_report_browser.py; skipped with the reason without it).
install_chromium() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo="sudo"
        else
            echo "scripts/test.sh: chromium is not installed and there is no sudo;" \
                 "the report's browser test will be skipped" >&2
            return 0
        fi
    fi
    local rc=0
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || rc=$?
    if [ "$rc" -eq 0 ]; then
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium || rc=$?
    fi
    if [ "$rc" -ne 0 ]; then
        echo "scripts/test.sh: could not install chromium (apt-get exit $rc);" \
             "the report's browser test will be skipped" >&2
    fi
    return 0
}
if [ ! -x /usr/bin/chromium ]; then
    if command -v apt-get >/dev/null 2>&1; then
        install_chromium
    else
        echo "scripts/test.sh: no apt-get; install chromium or the report's browser" \
             "test will be skipped" >&2
    fi
fi

# Two cores: run the suite in one process; tests bound their own run time.
exec python3 -m pytest "$@"
