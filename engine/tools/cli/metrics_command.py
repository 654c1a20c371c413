"""``heron metrics NAME [COMPONENT]``: a running topology's metrics, aggregated by the
Topology Master's rules (counts summed over instances, latencies averaged, backpressure
time summed), one row per component, or per instance with ``--instances``.

The Topology Master holds the latest value of every metric of every instance (the
Metrics Managers forward them each second); each Metrics Manager also serves them in
Prometheus text format, and the table ends with those endpoints. Instances that are
crash-looping (restarted again and again with no progress, engine.common.process.restart_policy)
are counted in the ``crash-looping`` column and listed under the table with their last
error. Instances whose figures are stale (not reported for more than five seconds:
dead, stuck or unreachable, engine/tmanager/staleness.py) are counted in the ``stale``
column and listed under the table with their age, since their values are frozen;
``--json`` gives each instance a ``stale`` flag (true or false) beside its
``__report-age``, by the same rule (absent when the answer carries no age).
Kafka spouts' lag per partition follows the tables (engine/tools/cli/metrics_kafka.py).

The Prometheus endpoints answer only requests carrying the user's access token as a
bearer token (engine/common/security/access_token.py); the table says where it is.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import click
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from engine.common.process.restart_policy import crash_loop_error
from engine.messages import tmanager_pb2
from engine.tmanager.staleness import STALE_AFTER_SECS, report_age, stale_age
from engine.tools.cli.display import make_console
from engine.tools.cli.env import CommandError, Env, ask_topology_master, common_options
from engine.tools.cli.metrics_kafka import kafka_lag_renderables

#: (metric, column, how instances combine)
COLUMNS = (("__emit-count", "emitted", "sum"), ("__execute-count", "executed", "sum"),
           ("__ack-count", "acked", "sum"), ("__fail-count", "failed", "sum"),
           ("__timeout-count", "timed out", "sum"),
           ("__execute-latency", "execute ms", "avg"),
           ("__process-latency", "process ms", "avg"),
           ("__complete-latency", "complete ms", "avg"),
           ("__pending", "pending", "sum"), ("__restart-count", "restarts", "sum"),
           ("__cpu-seconds", "cpu s", "sum"), ("__rss-bytes", "rss MB", "sum"))
STMGR_COMPONENT = "__stmgr__"
#: a Stream Manager's time spent with back pressure it initiated
BACKPRESSURE_INITIATED_MS = "__time-spent-back-pressure-initiated-ms"
METRICSMGR_COMPONENT = "__metricsmgr__"
#: the Topology Master's own metrics (engine.tmanager.master.TMANAGER_COMPONENT)
TMANAGER_COMPONENT = "__tmanager__"


@dataclass
class Row:
    name: str
    instances: int = 0
    values: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    #: instances crash-looping, with their last error
    crash_looping: dict[str, str] = field(default_factory=dict)
    #: instances whose figures are stale, with their age in seconds
    stale: dict[str, float] = field(default_factory=dict)

    def add(self, metrics: dict[str, str], instance: str = "") -> None:
        self.instances += 1
        error = crash_loop_error(metrics)
        if error is not None:
            self.crash_looping[instance] = error
        age = stale_age(metrics)
        if age is not None:
            self.stale[instance] = age
        for metric, _, _ in COLUMNS:
            try:
                self.values[metric].append(float(metrics[metric]))
            except (KeyError, ValueError):
                pass

    def cell(self, metric: str, how: str) -> float | None:
        values = self.values.get(metric)
        if not values:
            return None
        return sum(values) if how == "sum" else sum(values) / len(values)


def fetch(env: Env, name: str, component: str | None,
          timeout: float | None = None) -> dict[tuple[str, str], dict[str, str]]:
    """{(component, instance): {metric: value}} from the topology's Topology Master."""
    response = ask_topology_master(env, name, lambda *_: tmanager_pb2.MetricRequest(),
                                   f"no metrics for {name!r}", timeout=timeout)
    out: dict[tuple[str, str], dict[str, str]] = {}
    for task_metric in response.metric:
        for metric in task_metric.metric:
            comp, _, metric_name = metric.name.partition("/")
            if component is not None and comp != component:
                continue
            out.setdefault((comp, task_metric.instance_id), {})[metric_name] = metric.value
    if component is not None and not out:
        raise CommandError(f"topology {name!r} has no metrics for component {component!r} "
                           "(yet: metrics arrive about once a second)")
    return out


def checkpoint_renderables(metrics: dict[tuple[str, str], dict[str, str]]) -> list[Any]:
    """An EFFECTIVELY_ONCE topology's checkpoints: the Topology Master's line (the last
    checkpoint, abandoned ones, the last rollback and why) and each task's state size,
    save time and restores. Nothing for other topologies."""
    tm = next((v for (c, _), v in metrics.items() if c == TMANAGER_COMPONENT
               and "__checkpoints-completed" in v), None)
    if tm is None:
        return []
    line = (f"checkpoints: {tm['__checkpoints-completed']} completed, "
            f"{tm.get('__checkpoints-abandoned', '0')} abandoned; the last, "
            f"{tm.get('__checkpoint-last-id') or 'none'}, took "
            f"{tm.get('__checkpoint-last-duration-ms', '0')} ms for "
            f"{int(tm.get('__checkpoint-last-bytes', 0)):,} bytes; "
            f"{tm.get('__restores', '0')} restore(s), the last to "
            f"{tm.get('__restore-last-checkpoint') or '-'} "
            f"({tm.get('__restore-last-reason') or '-'})")
    try:
        rescaled = json.loads(tm.get("__rescale-last") or "{}")
    except ValueError:
        rescaled = {}
    for component, (before, after, moved) in sorted(rescaled.items()):
        line += (f"\nlast resize of {component}: {before} -> {after} tasks, {moved} key "
                 f"group(s) moved with their state")
    table = Table(title="checkpointed state per task", title_justify="left")
    for column in ("instance", "state bytes", "keyed keys", "key groups", "save ms", "saves",
                   "restores", "restore ms"):
        table.add_column(column, justify="left" if column == "instance" else "right")
    for (_, instance), values in sorted(metrics.items()):
        if "__checkpoint-saves" not in values:
            continue
        table.add_row(instance, f"{int(values.get('__checkpoint-bytes', 0)):,}",
                      f"{int(values.get('__keyed-keys', 0)):,}",
                      values.get("__key-groups-owned", "-"),
                      values.get("__checkpoint-save-ms", "-"),
                      values.get("__checkpoint-saves", "-"),
                      values.get("__restores", "-"), values.get("__restore-ms", "-"))
    return [Text(line), table]


def crash_looping(metrics: dict[tuple[str, str], dict[str, str]]) -> dict[tuple[str, str], str]:
    """(component, instance) -> last error of every instance or process crash-looping."""
    out = {}
    for key, values in sorted(metrics.items()):
        error = crash_loop_error(values)
        if error is not None:
            out[key] = error
    return out


def _fmt(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    if metric == "__rss-bytes":
        return f"{value / 1e6:,.1f}"
    if metric.endswith("latency") or metric == "__cpu-seconds":
        return f"{value:,.3f}"
    return f"{int(value):,}"


def with_stale_flag(values: dict) -> dict:
    """One instance's figures with ``stale`` (whether they are older than
    STALE_AFTER_SECS, as the table counts them) when they say their ``__report-age``."""
    if report_age(values) is None:
        return values
    return {**values, "stale": stale_age(values) is not None}


@click.command("metrics")
@click.argument("name")
@click.argument("component", required=False)
@click.option("--instances", is_flag=True, help="One row per instance instead of per component.")
@click.option("--json", "as_json", is_flag=True, help="Print the raw metrics as JSON.")
@common_options
def metrics_command(name: str, component: str | None, instances: bool, as_json: bool,
                    env: Env) -> None:
    """Metrics of topology NAME (optionally only COMPONENT)."""
    metrics = fetch(env, name, component)
    if as_json:
        click.echo(json.dumps({f"{c}/{i}": with_stale_flag(v)
                               for (c, i), v in sorted(metrics.items())},
                              indent=2, sort_keys=True))
        return
    rows: dict[str, Row] = {}
    managers: list[tuple[str, dict[str, str]]] = []
    endpoints: list[str] = []
    #: connections refused for want of the topology's keys, per engine process
    refused: dict[str, int] = {}
    for (comp, instance), values in sorted(metrics.items()):
        if values.get("__connections-refused", "0") not in ("", "0"):
            refused[instance] = int(values["__connections-refused"])
        if comp == TMANAGER_COMPONENT:
            continue
        if comp == STMGR_COMPONENT:
            managers.append((instance, values))
            continue
        if comp == METRICSMGR_COMPONENT:
            if values.get("__prometheus-port"):
                endpoints.append(f"{instance}: http://127.0.0.1:{values['__prometheus-port']}/metrics")
            continue
        key = instance if instances else comp
        rows.setdefault(key, Row(key)).add(values, instance)
    console = make_console()
    table = Table(title=f"{name}: metrics", title_justify="left")
    table.add_column("instance" if instances else "component", overflow="fold", min_width=12)
    table.add_column("tasks", justify="right")
    for _, column, _ in COLUMNS:
        table.add_column(column, justify="right")
    table.add_column("crash-looping", justify="right")
    table.add_column("stale", justify="right")
    for key in sorted(rows):
        row = rows[key]
        table.add_row(key, str(row.instances),
                      *(_fmt(row.cell(metric, how), metric) for metric, _, how in COLUMNS),
                      f"[bold red]{len(row.crash_looping)}[/]" if row.crash_looping else "0",
                      f"[bold yellow]{len(row.stale)}[/]" if row.stale else "0")
    needed = Measurement.get(console, console.options.update_width(10_000), table).maximum
    if not console.is_terminal:
        console.width = max(console.width, needed)  # piped: room for every column
    console.print(table)
    if needed > console.width:
        console.print(f"(the terminal is narrower than the table, so columns are squeezed: "
                      f"`heron metrics {name} --json` has every figure)", highlight=False)
    for key in sorted(rows):
        for instance, error in rows[key].crash_looping.items():
            console.print(f"[bold red]crash-looping[/] {instance}: {error}", highlight=False,
                          markup=True)
    for key in sorted(rows):
        for instance, age in rows[key].stale.items():
            console.print(f"[bold yellow]stale[/] {instance}: last reported {age:.0f} s ago "
                          f"(more than {STALE_AFTER_SECS:.0f} s: dead, stuck or unreachable; "
                          "its figures above are its last ones)", highlight=False, markup=True)
    if managers and component is None:
        bp = Table(title="stream managers", title_justify="left")
        for column in ("stream manager", "backpressure", "spouts paused s", "caused s",
                       "largest queue KB", "trees pending"):
            bp.add_column(column, justify="right")
        for sid, values in managers:
            bp.add_row(sid, "yes" if values.get("__backpressure") == "1" else "no",
                       f"{int(values.get('__time-spouts-paused-ms', 0)) / 1000:,.1f}",
                       f"{int(values.get(BACKPRESSURE_INITIATED_MS, 0)) / 1000:,.1f}",
                       f"{int(values.get('__largest-queue-bytes', 0)) / 1024:,.0f}",
                       values.get("__trees-pending", "-"))
        console.print(bp)
    if component is None:
        for part in checkpoint_renderables(metrics):
            console.print(part)
    for part in kafka_lag_renderables(metrics):
        console.print(part)
    for endpoint in endpoints:
        console.print(f"Prometheus {endpoint}")
    if endpoints:
        console.print("  (they answer requests with 'Authorization: Bearer TOKEN', TOKEN in "
                      f"{env.home / 'access-token'}: Prometheus's credentials_file)",
                      highlight=False, markup=False)
    if refused and component is None:
        console.print("connections refused (peers without the topology's keys): "
                      + ", ".join(f"{who} {n:,}" for who, n in sorted(refused.items())))
