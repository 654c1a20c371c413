"""``heron list``: the topologies in the state manager, their state, whether anything is
crash-looping (from each Topology Master's metrics) and where a cluster scheduler runs
their containers."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from engine.messages import topology_pb2
from engine.tools.cli.display import make_console
from engine.tools.cli.env import BadInput, CommandError, Env, common_options
from engine.tools.cli.metrics_command import crash_looping, fetch


@click.command("list")
@common_options
def list_command(env: Env) -> None:
    """List the topologies in the state manager."""
    state = env.open_state()
    rows: list[tuple[str, ...]] = []  # the table's cells, the status column added below
    try:
        for name in state.topologies():
            topology = state.get("topologies", name)
            if topology is None:
                continue
            pplan = state.get("pplans", name)
            topo_state = (pplan.topology.state if pplan is not None and pplan.HasField("topology")
                          else topology.state)
            packing = state.get("packingplans", name)
            execution = state.get("executionstate", name)
            scheduler = state.get("schedulers", name)
            working = env.working_dir(name)
            if scheduler is not None and scheduler.job_page_link:
                working = Path(scheduler.job_page_link[0].removeprefix("file://"))
            submitted = (datetime.fromtimestamp(execution.submission_time).strftime(
                "%Y-%m-%d %H:%M:%S") if execution is not None and execution.submission_time
                else "-")
            rows.append((name, topology.id, topology_pb2.TopologyState.Name(topo_state),
                         str(len(packing.container_plans)) if packing is not None else "-",
                         submitted, str(working) if working.exists() else "-"))
    finally:
        state.close()
    statuses = {row[0]: _restart_status(env, row[0]) for row in rows}
    rows = [(*row[:3], statuses[row[0]][0], *row[3:]) for row in rows]
    console = make_console()
    if not rows:
        console.print(f"no topologies ({env.state_spec().describe()})")
        return
    table = Table(title=f"topologies ({env.state_spec().describe()})", title_justify="left")
    for column in ("name", "id", "state", "status", "containers", "submitted", "working dir"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for name, (_, details) in statuses.items():
        for line in details:
            console.print(f"[bold red]{name}: crash-looping[/] {line}", highlight=False)
    for row in rows:
        for line in _cluster_status(Path(row[-1])) if row[-1] != "-" else []:
            console.print(f"{row[0]}: {line}", highlight=False)


def _cluster_status(working_dir: Path) -> list[str]:
    """Where a cluster scheduler runs the containers, and how long each recovery took
    (its ``scheduler-status.json``, engine/scheduler/slurm)."""
    from engine.scheduler.slurm.scheduler import STATUS_FILE  # deferred: CLI start-up time

    try:
        status = json.loads((working_dir / STATUS_FILE).read_text())
    except (OSError, ValueError):
        return []
    jobs = status.get("jobs", [])
    placed = ", ".join(f"container {j['container']} job {j['job_id']} {j['state'].lower()}"
                       f"{' on ' + j['node'] if j.get('node') else ''}" for j in jobs)
    lines = [f"{status.get('scheduler', 'cluster')} jobs: {placed or 'none'}"]
    if status.get("excluded"):
        lines.append(f"nodes excluded (down): {', '.join(status['excluded'])}")
    for recovery in status.get("recoveries", [])[-5:]:
        lines.append(f"recovered container {recovery['container']} in {recovery['seconds']:.1f} s "
                     f"after {recovery['cause']}{_recovery_detail(recovery)}")
    return lines


def _recovery_detail(recovery: dict[str, Any]) -> str:
    """Where the time starts, and when the loss was noticed and the job ran again."""
    if recovery.get("measured_from") != "last report":
        return " (timed from the loss being noticed: its last report is unknown)"
    steps = [f"{label} after {recovery[key]:.1f} s" for key, label in
             (("detected_after", "noticed"), ("running_after", "running"))
             if recovery.get(key) is not None]
    return f" (timed from its last report; {', '.join(steps)})" if steps else \
        " (timed from its last report)"


#: how long `heron list` waits for each Topology Master's metrics
LIST_TM_TIMEOUT_SECS = 2.0


def _restart_status(env: Env, name: str) -> tuple[str, list[str]]:
    """("ok" or the components crash-looping, one "instance: last error" line each), from
    the Topology Master's metrics (engine.common.process.restart_policy); "-" when it does not
    answer."""

    try:
        looping = crash_looping(fetch(env, name, None, timeout=LIST_TM_TIMEOUT_SECS))
    except (CommandError, BadInput):
        return "-", []
    if not looping:
        return "ok", []
    components = sorted({component for component, _ in looping})
    return (f"crash-looping: {', '.join(components)}",
            [f"{instance}: {error}" for (_, instance), error in looping.items()])
