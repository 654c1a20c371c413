"""``python -m engine.metricsmgr --launch PATH --container N``."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from engine.launch import LaunchSpec
from engine.metricsmgr.manager import MetricsManager


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="heron-metricsmgr")
    parser.add_argument("--launch", required=True)
    parser.add_argument("--container", type=int, required=True)
    args = parser.parse_args(argv)
    try:
        from engine.process import die_with_parent
        die_with_parent()
    except ImportError:  # pragma: no cover
        pass
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from engine.fastpath import log_tuple_path  # the first log line: which tuple path
    log_tuple_path()
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    spec = LaunchSpec.load(args.launch)
    state = spec.state.open()
    manager = MetricsManager(spec, args.container, state)
    try:
        manager.serve(lambda: not stopping.is_set())
    finally:
        manager.close()
        state.close()


if __name__ == "__main__":
    main()
