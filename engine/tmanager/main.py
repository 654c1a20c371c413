"""``python -m engine.tmanager --launch PATH``."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from engine.launch import LaunchSpec
from engine.tmanager.master import TopologyMaster

log = logging.getLogger("heron.tmanager")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="heron-tmanager")
    parser.add_argument("--launch", required=True)
    parser.add_argument("--shell-endpoint", default="",
                        help="container 0's shell endpoint, published in the TM location")
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
    master = TopologyMaster(spec, state, shell_endpoint=args.shell_endpoint)
    try:
        master.load()
        master.establish()
        master.serve(lambda: not stopping.is_set())
    finally:
        master.close()
        state.close()  # the ephemeral location goes with it


if __name__ == "__main__":
    main()
