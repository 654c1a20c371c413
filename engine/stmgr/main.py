"""``python -m engine.stmgr --launch PATH --container N``."""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import Any

from engine.common.launch import LaunchSpec, instance_id
from engine.common.plan import LogicalPlan
from engine.common.process.profiling import profiled
from engine.common.startup import launch_parser, run_with_state, start
from engine.stmgr.manager import StreamManager

log = logging.getLogger("heron.stmgr")


def main(argv: list[str] | None = None) -> None:
    parser = launch_parser("heron-stmgr", container="")
    parser.add_argument("--shell-endpoint", default="",
                        help="the container shell's endpoint, published in the physical plan")
    started = start(parser, argv)
    code = run_with_state(started.args.launch, log,
                          lambda spec, state: run(spec, state, started.args, started.stopping))
    if code:
        sys.exit(code)


def run(spec: LaunchSpec, state: Any, args: argparse.Namespace,
        stopping: threading.Event) -> int:
    packing = state.get("packingplans", spec.topology_name)
    if packing is None:
        log.error("no packing plan for %r in %s", spec.topology_name, spec.state.describe())
        return 1
    expected = {}
    for container in packing.container_plans:
        if container.id == args.container:
            for inst in container.instance_plans:
                instance_name = instance_id(args.container, inst.component_name, inst.task_id)
                expected[instance_name] = inst.task_id
    stored = state.get("topologies", spec.topology_name)
    if stored is None:
        log.error("no topology %r in %s", spec.topology_name, spec.state.describe())
        return 1
    plan = LogicalPlan.from_proto(stored)
    manager = StreamManager(spec, args.container, plan, expected, state,
                            shell_endpoint=args.shell_endpoint)
    log.info("stream manager %s: %d local instances expected; data at %s",
             manager.id, len(expected), manager.data_endpoint)
    try:
        with profiled("stmgr"):
            manager.serve(lambda: not stopping.is_set())
    finally:
        manager.close()
    return 0


if __name__ == "__main__":
    main()
