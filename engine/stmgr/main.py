"""``python -m engine.stmgr --launch PATH --container N``."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from engine.launch import LaunchSpec, instance_id
from engine.plan import LogicalPlan
from engine.process.profiling import profiled
from engine.stmgr.manager import StreamManager

log = logging.getLogger("heron.stmgr")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="heron-stmgr")
    parser.add_argument("--launch", required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--shell-endpoint", default="",
                        help="the container shell's endpoint, published in the physical plan")
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
    try:
        packing = state.get("packingplans", spec.topology_name)
        if packing is None:
            log.error("no packing plan for %r in %s", spec.topology_name, spec.state.describe())
            sys.exit(1)
        expected = {}
        for container in packing.container_plans:
            if container.id == args.container:
                for inst in container.instance_plans:
                    expected[instance_id(args.container, inst.component_name, inst.task_id)] = inst.task_id
        stored = state.get("topologies", spec.topology_name)
        if stored is None:
            log.error("no topology %r in %s", spec.topology_name, spec.state.describe())
            sys.exit(1)
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
    finally:
        state.close()


if __name__ == "__main__":
    main()
