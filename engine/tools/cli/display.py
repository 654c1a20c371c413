"""Live status line and end-of-run summary for ``heron run`` (rich)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from engine.common.runtime.checkpoint_stats import START_REASONS, CheckpointStats

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.common.local_run import HeronRunResult
    from engine.common.plan.logical import LogicalPlan
    from engine.storm.cluster import RunResult


def status_renderable(stats: Mapping[str, Any], elapsed: float, label: str) -> Text:
    """One line per component: what it emitted, acked and failed so far."""
    text = Text()
    text.append(f"{label}  {elapsed:6.1f}s\n", style="bold")
    for cs in stats.values():
        line = f"  {cs.component:<24} emitted {cs.emitted:>10,}"
        if cs.kind == "bolt":
            line += f"  executed {cs.executed:>10,}"
        line += f"  acked {cs.acked:>10,}  failed {cs.failed:>8,}"
        text.append(line)
        if cs.restarts:
            text.append(f"  restarts {cs.restarts}", style="red")
        if getattr(cs, "crash_looping", 0):
            text.append(f"  crash-looping ({cs.last_error})", style="bold red")
        text.append("\n")
    return text


def checkpoint_line(stats: CheckpointStats) -> str:
    """One line on an EFFECTIVELY_ONCE run's checkpoints and rollbacks."""
    text = (f"checkpoints: {stats.completed:,} completed, {stats.abandoned:,} abandoned; "
            f"the last, {stats.last_checkpoint_id or 'none'}, took "
            f"{stats.last_duration_secs * 1000:,.0f} ms for {stats.last_bytes:,} bytes; "
            f"{stats.rollbacks} rollback(s)")
    rollbacks = [r for r in stats.restores if r.reason not in START_REASONS]
    if rollbacks:
        last = rollbacks[-1]
        text += f", the last to {last.checkpoint_id or 'empty state'} ({last.reason})"
    return text


def summary_renderable(result: HeronRunResult | RunResult, engine: str, topology: str,
                       top: int = 10) -> Group:
    parts: list[Any] = []
    rate_basis = max(result.elapsed, 1e-9)
    parts.append(Text(f"{topology} on the {engine} engine: {result.reason} after "
                      f"{result.elapsed:.1f}s", style="bold"))
    table = Table()
    for col in ("component", "tasks", "emitted", "executed", "acked", "failed", "errors",
                "restarts", "emitted/s"):
        table.add_column(col, justify="left" if col == "component" else "right",
                         no_wrap=True)
    for cs in result.components.values():
        table.add_row(cs.component, str(cs.tasks), f"{cs.emitted:,}",
                      f"{cs.executed:,}" if cs.kind == "bolt" else "-", f"{cs.acked:,}",
                      f"{cs.failed:,}", f"{cs.errors:,}", f"{cs.restarts:,}",
                      f"{cs.emitted / rate_basis:,.0f}")
    parts.append(table)
    for cap in result.capture.streams.values():
        if not cap.count:
            continue
        if cap.latest:
            parts.append(Text(f"{cap.component}/{cap.stream}: {cap.count:,} tuples; latest "
                              f"value per key, top {min(top, len(cap.latest))} of "
                              f"{len(cap.latest):,} keys", style="italic"))
            out = Table()
            for name in cap.fields:
                out.add_column(name, justify="right" if name == cap.fields[-1] else "left")
            for key, value in cap.top(top):
                out.add_row(*[str(k) for k in key], f"{value:,}")
            parts.append(out)
        else:
            samples = ", ".join(repr(s) for s in cap.samples)
            parts.append(Text(f"{cap.component}/{cap.stream}: {cap.count:,} tuples, "
                              f"e.g. {samples}"))
    for cs in result.components.values():
        if getattr(cs, "crash_looping", 0):
            parts.append(Text(f"{cs.component}: crash-looping ({cs.crash_looping} of {cs.tasks} "
                              f"tasks), last error: {cs.last_error}", style="bold red"))
        elif cs.last_error:
            parts.append(Text(f"{cs.component}: last error: {cs.last_error}", style="red"))
    checkpoints = getattr(result, "checkpoints", None)
    if checkpoints is not None:
        parts.append(Text(checkpoint_line(checkpoints)))
    if result.error:
        parts.append(Text(f"error: {result.error}", style="bold red"))
    parts.append(Text(f"logs: {result.log_dir}", style="dim"))
    return Group(*parts)


def make_console(stderr: bool = False) -> Console:
    """A console that is wide enough for the summary even when output is piped
    (rich assumes 80 columns without a terminal)."""
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 120
    return Console(stderr=stderr, highlight=False, width=width)

def planned_components(plan: LogicalPlan) -> list[str]:
    """One line per component of ``plan`` (an ``engine.common.plan.logical.LogicalPlan``), in the
    order `heron run` lists them: name, spout or bolt, tasks. For a Summingbird job these
    are the nodes its planner made (``source-0``, ``flat_map-1``, ``sum_by_key-2-NAME``)."""
    width = max((len(name) for name in plan.components), default=0)
    return [f"{c.name:<{width}}  {c.kind:<5}  {c.parallelism} task"
            f"{'s' if c.parallelism != 1 else ''}" for c in plan.components.values()]
