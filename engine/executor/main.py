"""``python -m engine.executor --launch PATH --container N``: run one container.

The executor dies with its parent (the scheduler), reads the launch file and the packing
plan, starts its container's processes under the launch spec's restart policy, and on
SIGTERM/SIGINT stops them in Heron's order (instances, stream manager, metrics manager,
Topology Master) and exits 0. When a process exhausts its restarts the executor stops the
rest and exits 1, as Heron's does, leaving the decision to its own supervisor.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from engine.executor.commands import container_processes, stop_stages
from engine.executor.packing_wait import PackingPlanMissing, wait_for_packing_plan
from engine.launch import LaunchError, LaunchSpec, executor_name
from engine.process import Supervisor, die_with_parent

log = logging.getLogger("heron.executor")

#: how long the container's processes get to stop before SIGKILL
STOP_GRACE_SECS = 5.0


def configure_logging() -> None:
    """One line per record on stderr, which the scheduler sends to logs/executor-N.log."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.executor",
                                     description="Run one container of a topology.")
    parser.add_argument("--launch", required=True, help="launch.json (or its directory)")
    parser.add_argument("--container", type=int, required=True, help="container index (0 = TM)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    args = parse_args(argv)
    configure_logging()
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("received %s; stopping container %d", signal.Signals(signum).name, args.container)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        spec = LaunchSpec.load(args.launch)
    except LaunchError as exc:
        log.error("%s", exc)
        return 1
    try:
        state = spec.state.open()
    except Exception as exc:
        log.error("cannot open the state manager (%s): %s", spec.state.describe(), exc)
        return 1
    try:
        return _run(spec, args.container, state, stop)
    finally:
        state.close()


def _run(spec: LaunchSpec, container: int, state: object, stop: threading.Event) -> int:
    try:
        packing = wait_for_packing_plan(state, spec.topology_name, where=spec.state.describe(),
                                        cancel=stop)
        processes = container_processes(spec, container, packing)
    except (PackingPlanMissing, ValueError) as exc:
        log.error("%s", exc)
        return 1
    if stop.is_set():
        return 0
    supervisor = Supervisor(processes, spec.max_restarts, spec.restart_interval,
                            pid_dir=spec.pid_dir, name=executor_name(container))
    log.info("container %d of %s (%s): starting %s", container, spec.topology_name,
             spec.topology_id, ", ".join(p.name for p in processes))
    supervisor.start()
    code = 0
    while not stop.wait(0.2):
        if supervisor.failed.is_set():
            log.error("gave up on %s; stopping the container", ", ".join(supervisor.gave_up()))
            code = 1
            break
    supervisor.stop(STOP_GRACE_SECS, stop_stages(container, packing))
    log.info("container %d stopped", container)
    return code
