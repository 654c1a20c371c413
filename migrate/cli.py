"""``heron-migrate``: placeholder entry point until the migrator lands."""

from __future__ import annotations

import sys


def main() -> None:
    sys.stderr.write("heron-migrate: not available in this version yet\n")
    sys.exit(2)
