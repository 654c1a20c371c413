"""What a test does when something it needs is not on this machine.

Outside the test script it skips, saying what is missing, so a developer without root or
Debian's packages can still run the rest. ``scripts/test.sh`` (the README's test command
and CI's) installs Chromium, ZooKeeper, Redis, Slurm and iproute2 or fails naming the package,
and sets ``HERON_TEST_REQUIRE_ALL=1``: there a missing requirement fails the test, so no
browser, ZooKeeper, Redis or Slurm test can turn into a quiet skip.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_ALL_ENV = "HERON_TEST_REQUIRE_ALL"


def unavailable(reason: str) -> NoReturn:
    """Skip with ``reason``, or fail with it where every requirement must be met."""
    if os.environ.get(REQUIRE_ALL_ENV, "").strip() == "1":
        pytest.fail(f"{reason} ({REQUIRE_ALL_ENV}=1: scripts/test.sh installs every "
                    "requirement, so none may be missing)", pytrace=False)
    pytest.skip(reason)
