"""Start one task: load the topology as the submitter did, connect, wait for the
physical plan, host the component, run it until told to stop.

The main thread is the executor thread (user code gets the main thread, as it would as
a Storm worker's only task); the gateway runs beside it. SIGTERM asks both to stop:
the executor flushes its last batches, writes its capture summary and closes the
component; the gateway sends what it holds, then the sockets close with bounded linger.
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import zmq

from compat.storm_api.hosting import handle_component_exception, host_component
from compat.storm_api.state import StatefulComponent
from compat.storm_api.updatable import Updatable
from engine.common.grouping import build_grouping
from engine.common.launch import (
    LaunchSpec,
    instance_id,
    local_socket_name,
    metrics_socket_name,
    stmgr_id,
)
from engine.common.multilang import host_shell_component
from engine.common.network import ipc_endpoint
from engine.common.network.credits import WriteCredit
from engine.common.process.profiling import profiled
from engine.common.process.restart_policy import RestartPolicy
from engine.common.runtime.errors import ComponentFailure
from engine.common.runtime.layout import SYSTEM_COMPONENT, SYSTEM_TASK_ID, TaskLayout, build_context
from engine.common.runtime.logs import task_logger
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.common.startup import launch_parser, start
from engine.config.batching import batching
from engine.config.checkpointing import checkpointing
from engine.config.credits import capacities
from engine.config.execution import spout_wait_secs
from engine.config.key_groups import key_groups
from engine.config.keys import NAME_KEY, with_defaults
from engine.config.reliability import reliability, tick_frequency
from engine.instance.bolt_loop import BoltLoop
from engine.instance.capture import InstanceCapture
from engine.instance.collector import InstanceCollector, StreamOut
from engine.instance.gateway import PIPE_HWM, Gateway, metrics_pipe_endpoint
from engine.instance.loop import ASSIGNMENT, TaskGaveUp
from engine.instance.spout_loop import SpoutLoop
from engine.instance.stateful import TaskCheckpointing
from engine.messages import metrics_pb2, physical_plan_pb2, stmgr_pb2
from engine.statefulstorage import open_storage
from engine.statefulstorage.rescale import keyed_by_input

log = logging.getLogger("heron.instance")


class TaskInfo:
    def __init__(self, component: str, task_id: int, kind: str, index: int) -> None:
        self.component = component
        self.task_id = task_id
        self.kind = kind
        self.index = index
        self.upstream_tasks: set[int] = set()


def parser() -> argparse.ArgumentParser:
    result = launch_parser("heron-instance", container="")
    result.add_argument("--task", type=int, required=True)
    return result


def main(argv: list[str] | None = None) -> None:
    started = start(parser(), argv)
    try:
        code = run(started.args, started.stopping)
    except TaskGaveUp as exc:
        log.error("%s", exc)
        code = 1
    sys.exit(code)


def run(args: argparse.Namespace, stopping: threading.Event) -> int:
    spec = LaunchSpec.load(args.launch)
    with spec.state.open() as state:
        packing = state.get("packingplans", spec.topology_name)
    if packing is None:
        log.error("no packing plan for topology %r in %s", spec.topology_name,
                  spec.state.describe())
        return 1
    placement = None
    for container in packing.container_plans:
        for inst in container.instance_plans:
            if inst.task_id == args.task:
                placement = (container.id, inst)
    if placement is None or placement[0] != args.container:
        log.error("task %s is not in container %s of the packing plan", args.task, args.container)
        return 1
    inst_plan = placement[1]
    try:
        loaded = spec.load_topology()
    except Exception as exc:
        # The submitter could load it but this process cannot (a module missing from the
        # workers' environment...): say so where `heron run`/`heron logs` look, at once,
        # instead of only in this process's log after every restart has failed.
        log.exception("cannot load the topology")
        text = (f"component {inst_plan.component_name!r} task {args.task} cannot load the "
                f"topology: {type(exc).__name__}: {exc}")
        record_failure(spec, TaskInfo(inst_plan.component_name, args.task, "", 0), text)
        return 1
    plan = loaded.plan
    comp = plan.components.get(inst_plan.component_name)
    if comp is None:
        log.error("component %r of the packing plan is not in the topology",
                  inst_plan.component_name)
        return 1
    task = TaskInfo(comp.name, args.task, comp.kind, inst_plan.component_index)
    conf = with_defaults(plan.config)
    conf[NAME_KEY] = plan.name
    conf["storm.id"] = spec.topology_id  # Storm's key for one submission's id
    conf.update(comp.config)
    serializer = serializer_for_config(conf)
    me = physical_plan_pb2.Instance(instance_id=instance_id(args.container, comp.name, args.task),
                                    stmgr_id=stmgr_id(args.container))
    me.info.task_id = args.task
    me.info.component_index = inst_plan.component_index
    me.info.component_name = comp.name
    publisher = metrics_pb2.MetricPublisher(hostname="127.0.0.1", port=args.task,
                                            component_name=comp.name, instance_id=me.instance_id,
                                            instance_index=inst_plan.component_index)
    ctx = zmq.Context()
    write_credit = WriteCredit(capacities(conf).write(comp.kind))
    pipe_endpoint = f"inproc://executor-{args.task}"
    gateway = Gateway(ctx, pipe_endpoint,
                      stmgr_endpoint=ipc_endpoint(spec.topology_id, local_socket_name(
                          args.container, spout=comp.kind == "spout")),
                      metrics_endpoint=ipc_endpoint(spec.topology_id,
                                                    metrics_socket_name(args.container)),
                      instance=me, topology_name=spec.topology_name, topology_id=spec.topology_id,
                      publisher=publisher, stopping=stopping, write_credit=write_credit)
    gateway.start()
    gateway.bound.wait(10)
    pipe = ctx.socket(zmq.PAIR)
    pipe.setsockopt(zmq.LINGER, 0)
    pipe.setsockopt(zmq.SNDHWM, PIPE_HWM)
    pipe.setsockopt(zmq.RCVHWM, PIPE_HWM)
    pipe.connect(pipe_endpoint)
    metrics_pipe = ctx.socket(zmq.PUSH)
    metrics_pipe.setsockopt(zmq.LINGER, 0)
    metrics_pipe.setsockopt(zmq.SNDHWM, 4)
    metrics_pipe.connect(metrics_pipe_endpoint(pipe_endpoint))
    try:
        return _run_task(spec, loaded, plan, comp, task, conf, serializer, pipe, stopping,
                         metrics_pipe, write_credit)
    finally:
        gateway.join(5)
        pipe.close(linger=0)
        metrics_pipe.close(linger=0)
        ctx.term()


def _wait_for_plan(pipe: zmq.Socket[bytes], stopping: threading.Event) -> Any:
    """The first message the executor gets is the physical plan (relayed by the gateway)."""
    while not stopping.is_set():
        if pipe.poll(200):
            return pipe.recv_multipart(copy=False)
    return None


def _run_task(spec: LaunchSpec, loaded: Any, plan: Any, comp: Any, task: TaskInfo,
              conf: dict[str, Any], serializer: Any, pipe: zmq.Socket[bytes],
              stopping: threading.Event, metrics_pipe: zmq.Socket[bytes] | None = None,
              write_credit: WriteCredit | None = None) -> int:
    first = _wait_for_plan(pipe, stopping)
    if first is None:
        pipe.send_multipart([b"X"])
        return 0
    if first[0].bytes != ASSIGNMENT:
        log.error("expected the physical plan first, got %r", first[0].bytes[:60])
        pipe.send_multipart([b"X"])
        return 1
    pplan = stmgr_pb2.NewInstanceAssignmentMessage.FromString(first[1].bytes).pplan
    tasks_by_component, container_of = _layout(pplan)
    for inp in comp.inputs:
        task.upstream_tasks.update(tasks_by_component.get(inp.source, []))
    context = _context(plan, comp, task, tasks_by_component)
    streams: dict[str, StreamOut] = {}
    captured_fields: dict[str, tuple[str, ...]] = {}
    all_groupings = _groupings(plan, comp, task, tasks_by_component, container_of, context)
    for stream in comp.outputs.values():
        out = streams[stream.name] = StreamOut.of(plan, comp, stream, all_groupings[stream.name],
                                                  capture_all=spec.capture_all_streams)
        if out.captured:
            captured_fields[stream.name] = out.fields
    # Component log lines go to the process's own log file unless the user chose a file.
    own_file = f"{instance_id(args_container(pplan, task), comp.name, task.task_id)}.log"
    logger = task_logger(conf, spec.log_dir, plan.name, comp.name, task.task_id,
                         default_file=own_file)
    capture = None
    if captured_fields:
        capture = InstanceCapture(spec.capture_dir, comp.name, task.task_id, captured_fields,
                                  serializer.loads, capture_all=spec.capture_all)
    stats = TaskStats(comp.name, task.task_id)
    batches = batching(conf)
    holder: dict[str, Any] = {}

    def send(frames: list[bytes]) -> None:
        holder["loop"].send_data(frames)

    rel = reliability(conf)
    collector = InstanceCollector(comp.name, task.task_id, streams, serializer, stats, logger,
                                  send, batches.rows, capture, acking=rel.acking,
                                  batch_bytes=batches.bytes)
    shell = _shell_command(spec, loaded, comp)
    stateful = None
    if rel.effectively_once:
        settings = checkpointing(conf)
        storage = open_storage(settings, topology_name=spec.topology_name,
                               working_dir=spec.working_dir)
        component_class = loaded.compiled.component_classes.get(comp.name)
        stateful = TaskCheckpointing(
            storage, serializer, comp.name, task.task_id, key_groups=key_groups(conf),
            component_class=component_class, from_savepoint=settings.from_savepoint,
            keyed_by_input=keyed_by_input(component_class,
                                          [i.grouping for i in comp.inputs]))
    factory = _factory(spec, loaded, comp, conf, context, collector, logger, shell, stateful)

    def running() -> bool:
        return not stopping.is_set()

    restart_policy = RestartPolicy.from_config(conf)
    if comp.kind == "spout":
        loop: Any = SpoutLoop(pipe, task, factory, collector, running,
                              wait_secs=spout_wait_secs(conf),
                              restart_policy=restart_policy, flush_secs=batches.secs,
                              max_pending=rel.max_spout_pending,
                              timeout_secs=(rel.message_timeout_secs if rel.timeouts_enabled
                                            else None))
    else:
        loop = BoltLoop(pipe, task, factory, collector, running, restart_policy=restart_policy,
                        flush_secs=batches.secs, loads=serializer.loads,
                        loads_many=serializer.loads_many,
                        tick_secs=tick_frequency(conf), shell=shell is not None)
    loop.metrics_pipe = metrics_pipe
    loop.use_credits(write_credit, read=comp.kind != "spout",
                     read_capacity=capacities(conf).bolt_read)
    loop.stateful = stateful
    loop.component_is_stateful = shell is None and issubclass(
        loaded.compiled.component_classes[comp.name], StatefulComponent)

    def on_new_layout(new_pplan: Any) -> None:
        """``heron update`` changed parallelism: route direct and task-id emits to the new
        tasks, expect end-of-stream from the new upstream tasks, tell Updatable components."""
        new_tasks, new_containers = _layout(new_pplan)
        for name, groupings in _groupings(plan, comp, task, new_tasks, new_containers,
                                          context).items():
            streams[name].groupings = groupings
        task.upstream_tasks = {t for inp in comp.inputs for t in new_tasks.get(inp.source, [])}
        # in place: the factory's context, so a component rebuilt by the restore that
        # follows (its state shared out to the new tasks) sees the new layout, and sources
        # that split their input by task (task_slice) take their new share
        context.clear()
        context.update(_context(plan, comp, task, new_tasks))
        hosted = loop.hosted
        component = getattr(hosted, "component", None)
        if isinstance(component, Updatable):
            try:
                try:
                    component.update(dict(context))
                except Exception as exc:
                    handle_component_exception(component, exc)
            except ComponentFailure as failure:
                loop.restart(failure)
        log.info("parallelism changed: %s", {c: len(t) for c, t in sorted(new_tasks.items())})

    loop.on_new_layout = on_new_layout
    holder["loop"] = loop
    code = 0
    try:
        loop.control(first)
        with profiled(f"instance-{comp.name}"):
            loop.run()
    except TaskGaveUp as exc:
        log.error("%s", exc)  # the executor restarts this process
        code = 1
    finally:
        loop.close()
    return code


def _layout(pplan: Any) -> tuple[dict[str, list[int]], dict[int, str]]:
    """(component -> sorted task ids, task id -> stream manager id) of a physical plan."""
    tasks_by_component: dict[str, list[int]] = {}
    container_of: dict[int, str] = {}
    for inst in pplan.instances:
        tasks_by_component.setdefault(inst.info.component_name, []).append(inst.info.task_id)
        container_of[inst.info.task_id] = inst.stmgr_id
    for ids in tasks_by_component.values():
        ids.sort()
    return tasks_by_component, container_of


def _context(plan: Any, comp: Any, task: TaskInfo,
             tasks_by_component: dict[str, list[int]]) -> dict[str, Any]:
    layout = TaskLayout(dict(tasks_by_component))
    layout.tasks_by_component[SYSTEM_COMPONENT] = [SYSTEM_TASK_ID]
    return build_context(plan, layout, comp.name, task.task_id)


def _groupings(plan: Any, comp: Any, task: TaskInfo, tasks_by_component: dict[str, list[int]],
               container_of: dict[int, str], context: dict[str, Any]) -> dict[str, list[Any]]:
    """Per output stream, the groupings this task computes targets with itself (direct
    and need_task_ids emits, every emit on a stream with a custom grouping), one per
    consumer; fields groupings by key group under EFFECTIVELY_ONCE, as the Stream Manager
    routes them. A custom grouping gets this task's ``context`` (the dict itself: it is
    updated in place when the layout changes, before the grouping's first tuple)."""
    conf = with_defaults(plan.config)
    groups = key_groups(conf) if reliability(conf).effectively_once else None
    my_stmgr = container_of[task.task_id]
    out: dict[str, list[Any]] = {}
    for stream in comp.outputs.values():
        groupings = []
        for consumer, inp in plan.consumers(comp.name, stream.name):
            ctasks = tasks_by_component[consumer.name]
            groupings.append(build_grouping(
                inp.grouping, ctasks, stream_fields=stream.fields, grouping_fields=inp.fields,
                local_tasks=[t for t in ctasks if container_of.get(t) == my_stmgr],
                consumer=consumer.name, key_groups=groups,
                custom_grouping=inp.custom_grouping, stream=stream.name))
            bind = getattr(groupings[-1], "bind", None)
            if bind is not None:
                bind(context)
        out[stream.name] = groupings
    return out


def args_container(pplan: physical_plan_pb2.PhysicalPlan, task: TaskInfo) -> int:
    for record in pplan.stmgrs:
        for inst in pplan.instances:
            if inst.info.task_id == task.task_id and inst.stmgr_id == record.id:
                return record.container_id
    return 0


def record_failure(spec: LaunchSpec, task: TaskInfo, text: str) -> None:
    """Leave the reason a task cannot run at all (this process cannot load the topology
    the submitter loaded) where ``heron run`` and ``heron logs`` look, so it reaches the
    user at once even though the executor keeps restarting the process."""
    directory = spec.home / "failures"
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{task.component}_{task.task_id}"
    tmp = directory / f".{target.name}.{os.getpid()}"
    tmp.write_text(text + "\n")
    os.replace(tmp, target)


def _shell_command(spec: LaunchSpec, loaded: Any, comp: Any) -> tuple[str, str] | None:
    """(command, script) when the component runs as a multi-lang subprocess."""
    in_process = comp.name in loaded.compiled.component_classes
    if in_process and not (spec.multilang and comp.shell):
        return None
    if not comp.shell:
        raise TaskGaveUp(f"component {comp.name!r} has neither a Python class nor a shell command")
    command, script = comp.shell
    if command == "streamparse_run":
        command = f"{shlex.quote(sys.executable)} -m compat.storm_api.run"
        if spec.multilang_serializer != "json":
            script = f"-s {spec.multilang_serializer} {script}"
    return command, script


def _factory(spec: LaunchSpec, loaded: Any, comp: Any, conf: dict[str, Any],
             context: dict[str, Any],
             collector: Any, logger: logging.Logger, shell: tuple[str, str] | None,
             stateful: Any = None) -> Any:
    if shell is None:
        cls = loaded.compiled.component_classes[comp.name]

        def make() -> Any:
            # under EFFECTIVELY_ONCE, the state the last restore loaded
            state = stateful.state if stateful is not None else None
            return host_component(cls, dict(conf), context, collector, logger, state=state)
        return make

    def make_shell() -> Any:
        cwd = Path(spec.shell_cwd) if spec.shell_cwd else Path.cwd()
        return host_shell_component(comp.kind, shell[0], shell[1], dict(conf), context,
                                    collector, logger, cwd=cwd,
                                    serializer=spec.multilang_serializer)
    return make_shell
