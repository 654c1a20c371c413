"""``python -m engine.metricsmgr --launch PATH --container N``."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

from engine.common.launch import LaunchSpec
from engine.common.startup import launch_parser, run_with_state, start
from engine.metricsmgr.manager import MetricsManager

log = logging.getLogger("heron.metricsmgr")


def main(argv: list[str] | None = None) -> None:
    started = start(launch_parser("heron-metricsmgr", container=""), argv)
    code = run_with_state(started.args.launch, log,
                          lambda spec, state: run(spec, state, started.args.container,
                                                  started.stopping))
    if code:
        sys.exit(code)


def run(spec: LaunchSpec, state: Any, container: int, stopping: threading.Event) -> int:
    manager = MetricsManager(spec, container, state)
    try:
        manager.serve(lambda: not stopping.is_set())
    finally:
        manager.close()
    return 0


if __name__ == "__main__":
    main()
