#!/usr/bin/env bash
# Installs everything the test suite needs, then runs the whole suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

# Two cores: run the suite in one process; tests bound their own run time.
exec python3 -m pytest "$@"
