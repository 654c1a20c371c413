"""``heron health NAME [--json]``: what the topology's Health Manager saw, concluded and
did (symptoms, diagnoses, actions and notes), oldest first, from ``healthmgr/<name>`` in
the state manager (engine/healthmgr/store.py)."""

from __future__ import annotations

import json
import time
from typing import Any

import click
from rich.table import Table

from engine.healthmgr.store import read_records
from engine.tools.cli.display import make_console
from engine.tools.cli.env import Env, common_options, require_topology


def _when(record: dict[str, Any]) -> str:
    stamp = record.get("time")
    if not isinstance(stamp, (int, float)):
        return "-"
    return time.strftime("%H:%M:%S", time.localtime(stamp)) + f".{int(stamp * 10) % 10}"


def _what(record: dict[str, Any]) -> str:
    kind = record.get("type")
    if kind == "action":
        target = (f"{record.get('current')} -> {record.get('target')}" if record["kind"] == "scale"
                  else f"container {record.get('container')}")
        note = f" ({record['note']})" if record.get("note") else ""
        return (f"{record['kind']} {target}: {record.get('status')}{note}; "
                f"{record.get('reason', '')}")
    if kind == "note":
        return record.get("message", "")
    detail = record.get("detail") or {}
    shown = ", ".join(f"{k}={v}" for k, v in detail.items() if not isinstance(v, dict))
    instances = ", ".join(record.get("instances") or ())
    return "; ".join(x for x in (record.get("kind", ""), instances, shown) if x)


@click.command("health")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the records as JSON.")
@common_options
def health_command(name: str, as_json: bool, env: Env) -> None:
    """Show the symptoms, diagnoses and actions of topology NAME's Health Manager."""
    state = env.open_state()
    try:
        require_topology(state, name)
        records = read_records(state, name)
    finally:
        state.close()
    if as_json:
        click.echo(json.dumps(records, indent=2, sort_keys=True))
        return
    console = make_console()
    if not records:
        console.print(f"{name}: no Health Manager records (is heron.topology.healthmgr.mode "
                      "cluster, and has a policy run yet?)")
        return
    table = Table(title=f"{name}: Health Manager", title_justify="left")
    for column in ("time", "type", "policy", "component", "what"):
        table.add_column(column, overflow="fold")
    for record in records:
        table.add_row(_when(record), record.get("type", ""), record.get("policy", ""),
                      record.get("component", ""), _what(record))
    console.print(table)
