"""What every engine process does first, written once: parse its arguments, die with
its parent, log one line per record on stderr (the supervisor sends it to the process's
log file) starting with which tuple path runs, stop on SIGTERM/SIGINT, and load the
launch file and open the state manager (a launch file that does not load, or a state
manager that does not answer, is one log line and exit status 1).

The Stream Manager, Topology Master, Metrics Manager, instances, Health Manager and
executors start this way; the scheduler service too, except that it is the root of its
topology's process tree and watches no parent.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.common.codec import log_tuple_path
from engine.common.launch import LaunchError, LaunchSpec
from engine.common.process.parent import die_with_parent

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass
class Started:
    args: argparse.Namespace
    #: set by SIGTERM or SIGINT: the process stops when it is
    stopping: threading.Event


def launch_parser(prog: str, description: str | None = None, *,
                  container: str | None = None) -> argparse.ArgumentParser:
    """A parser with ``--launch`` and, when ``container`` (its help text) is given,
    ``--container N``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--launch", required=True, help="launch.json (or its directory)")
    if container is not None:
        parser.add_argument("--container", type=int, required=True, help=container or None)
    return parser


def configure_logging(*, tuple_path: bool = True) -> None:
    """One line per record on stderr; the first says which tuple path runs."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format=LOG_FORMAT)
    if tuple_path:
        log_tuple_path()


def start(parser: argparse.ArgumentParser, argv: list[str] | None, *,
          watch_parent: bool = True, tuple_path: bool = True,
          on_signal: Callable[[argparse.Namespace, int], None] | None = None,
          ignore_hangup: bool = False) -> Started:
    """Parse ``argv``, die with the parent (``watch_parent``), configure logging and stop
    on SIGTERM/SIGINT (``on_signal(args, signum)`` is called first, e.g. to log it);
    ``ignore_hangup``: a closing terminal is no reason to stop (detached services)."""
    args = parser.parse_args(argv)
    if watch_parent:
        die_with_parent()
    configure_logging(tuple_path=tuple_path)
    stopping = threading.Event()

    def handler(signum: int, _frame: object) -> None:
        if on_signal is not None:
            on_signal(args, signum)
        stopping.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    if ignore_hangup:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    return Started(args, stopping)


def load_launch(launch: str, log: logging.Logger) -> LaunchSpec | None:
    """The launch spec, or None after one log line saying why it does not load."""
    try:
        return LaunchSpec.load(launch)
    except LaunchError as exc:
        log.error("%s", exc)
        return None


def open_state(spec: LaunchSpec, log: logging.Logger) -> Any | None:
    """The launch spec's state manager, open, or None after one log line."""
    try:
        return spec.state.open()
    except Exception as exc:
        log.error("cannot open the state manager (%s): %s", spec.state.describe(), exc)
        return None


def run_with_state(launch: str, log: logging.Logger,
                   body: Callable[[LaunchSpec, Any], int]) -> int:
    """``body(spec, state)`` with the launch file loaded and its state manager open (closed
    afterwards); a launch file that does not load, or a state manager that does not
    answer, is one log line and exit status 1: what every supervised process starts with."""
    spec = load_launch(launch, log)
    if spec is None:
        return 1
    state = open_state(spec, log)
    if state is None:
        return 1
    try:
        return body(spec, state)
    finally:
        state.close()
