"""``python -m engine.tmanager --launch PATH``."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

from engine.common.launch import LaunchSpec
from engine.common.startup import launch_parser, run_with_state, start
from engine.tmanager.master import TopologyMaster

log = logging.getLogger("heron.tmanager")


def main(argv: list[str] | None = None) -> None:
    parser = launch_parser("heron-tmanager")
    parser.add_argument("--shell-endpoint", default="",
                        help="container 0's shell endpoint, published in the TM location")
    started = start(parser, argv)
    code = run_with_state(started.args.launch, log,
                          lambda spec, state: run(spec, state, started.args.shell_endpoint,
                                                  started.stopping))
    if code:
        sys.exit(code)


def run(spec: LaunchSpec, state: Any, shell_endpoint: str, stopping: threading.Event) -> int:
    """Serve until ``stopping``; closing the state afterwards (the caller's) removes the
    ephemeral location with it."""
    master = TopologyMaster(spec, state, shell_endpoint=shell_endpoint)
    try:
        master.load()
        master.establish()
        master.serve(lambda: not stopping.is_set())
    finally:
        master.close()
    return 0


if __name__ == "__main__":
    main()
