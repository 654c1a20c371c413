#!/usr/bin/env bash
# Runs the linter and the type checker the way CI does; exits non-zero on any finding.
# Both read their configuration from pyproject.toml ([tool.ruff], [tool.mypy]), and the
# `test` extra pins their versions: pip install -e '.[test]'.
# Usage: bash scripts/lint.sh
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
echo "== ruff check"
python3 -m ruff check . || status=1
echo "== mypy"
python3 -m mypy || status=1
exit "$status"
