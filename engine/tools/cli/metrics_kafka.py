"""``heron metrics``'s Kafka lag table: per partition, how far each Kafka spout instance
is behind the log end (Storm's ``kafkaOffset/<topic>/partition_<n>/spoutLag``, read by
engine/common/runtime/source_lag.py), with its emitted and committed offsets and the log end
where the spout reports them, and a total per spout component.

Kept apart from metrics_command.py so the main command stays one screen of rules about
the Topology Master's figures; this module only shapes what the parser found.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from engine.common.runtime.source_lag import component_totals, lag_rows


def _cell(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def kafka_lag_renderables(metrics: dict[tuple[str, str], dict[str, str]]) -> list[Any]:
    """The Kafka lag table for ``{(component, instance): {metric: value}}``; nothing when
    no instance reports Kafka offsets (most topologies)."""
    triples = [(c, i, v) for (c, i), v in sorted(metrics.items())]
    rows = lag_rows(triples)
    totals = {t.component: t for t in component_totals(triples)}
    if not totals:
        return []
    table = Table(title="Kafka lag (log end minus the spout's position)", title_justify="left")
    for column in ("component", "instance", "topic", "partition", "lag", "emitted offset",
                   "committed offset", "log end offset"):
        table.add_column(column, justify="right" if column in ("partition", "lag") or
                         column.endswith("offset") else "left", overflow="fold")
    for component, total in totals.items():
        for row in (r for r in rows if r.component == component):
            table.add_row(component, row.instance, row.topic, str(row.partition),
                          _cell(row.lag), _cell(row.emitted), _cell(row.committed),
                          _cell(row.end))
        table.add_row(f"[bold]{component}[/]", "total",
                      ", ".join(total.topics) or "-",
                      f"{total.partitions} partition{'' if total.partitions == 1 else 's'}",
                      f"[bold]{total.lag:,}[/]", "", "", "", end_section=True)
    return [table]
