#!/usr/bin/env bash
# Installs everything the test suite needs, then runs the whole suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's packages: gcc, ZooKeeper, Slurm, iproute2, Chromium (fails naming the one it
# cannot install)
bash scripts/install-test-deps.sh

python3 -m pip install --quiet --disable-pip-version-check -e '.[test,bench]'

# The suite runs the compiled tuple path: a missing or stale build fails the tests that
# use it (never a skip); tests/engine/codec runs the pure-Python path beside it.
export HERON_REQUIRE_COMPILED=1
# Every requirement was installed above: a test that finds one missing fails, never skips
# (tests/unavailable.py).
export HERON_TEST_REQUIRE_ALL=1

# Two cores: run the suite in one process; tests bound their own run time.
# The slowest tests are listed at the end, so a run that grows says where.
exec python3 -m pytest --durations=25 "$@"
