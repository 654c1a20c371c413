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

# The linter and the type checker first (pyproject's [tool.ruff] and [tool.mypy]): a
# finding fails the run in seconds, before the suite's half hour.
bash scripts/lint.sh

# Tests mostly wait on engine processes, so two pytest-xdist workers (one per core) run
# them side by side; what must not share the machine at once (the Slurm test cluster,
# fixtures wider than one test) is kept on one worker by tests/parallel_groups.py.
# HERON_TEST_WORKERS=0 runs everything in this one process. Tests bound their own run
# time; the slowest are listed at the end, so a run that grows says where.
exec python3 -m pytest -n "${HERON_TEST_WORKERS:-2}" --dist loadgroup --durations=25 "$@"
