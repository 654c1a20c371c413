"""``heron update NAME --component-parallelism COMPONENT:N [...] [--container-number N]
[--dry-run]``: change a running topology's parallelism (see engine/submitter/update.py);
``heron update NAME --runtime-config POLICY:mode=activated|deactivated``: toggle a Health
Manager policy without restarting anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.table import Table

from engine.tools.cli.display import make_console
from engine.tools.cli.env import BadInput, Env, common_options, topology_security

if TYPE_CHECKING:  # types only: deferred at run time for the CLI's start-up time
    from engine.submitter.update import UpdatePlan

UPDATE_TIMEOUT_SECS = 30.0


@click.command("update")
@click.argument("name")
@click.option("--component-parallelism", "parallelism", multiple=True, metavar="COMPONENT:N",
              help="New parallelism of a component (repeatable).")
@click.option("--container-number", type=int, default=None,
              help="New number of containers (Stream Managers).")
@click.option("--dry-run", is_flag=True, help="Print the proposed packing plan and change nothing.")
@click.option("--runtime-config", "runtime", multiple=True,
              metavar="POLICY:mode=activated|deactivated",
              help="Turn a Health Manager policy on or off at run time (repeatable).")
@common_options
def update_command(name: str, parallelism: tuple[str, ...], container_number: int | None,
                   dry_run: bool, runtime: tuple[str, ...], env: Env) -> None:
    """Change the parallelism of running topology NAME through a new packing plan."""
    if runtime:
        _runtime_config(env, name, runtime, dry_run)
        if not parallelism and container_number is None:
            return
    # deferred: CLI start-up time (every command module loads for `heron --help`)
    from engine.submitter.runtime import RuntimeManager
    from engine.submitter.update import UpdateError, parse_parallelism, plan_update

    try:
        wanted = parse_parallelism(parallelism)
    except UpdateError as exc:
        raise BadInput(str(exc)) from None
    state = env.open_state()
    try:
        try:
            plan = plan_update(state, name, wanted, container_number)
        except UpdateError as exc:
            raise BadInput(f"cannot update {name!r}: {exc}") from None
        _print_plan(name, plan)
        if dry_run:
            make_console().print("dry run: nothing changed")
            return
        manager = RuntimeManager(state, name, home=env.home, working_dir=env.working_dir(name),
                                 security=topology_security(state, name, env.working_dir(name)))
        answer = manager.update(plan, UPDATE_TIMEOUT_SECS)
    finally:
        state.close()
    click.echo(f"updated {name!r}: {answer}")


def _print_plan(name: str, plan: UpdatePlan) -> None:
    console = make_console()
    table = Table(title=f"{name}: proposed packing plan {plan.proposed.id}",
                  title_justify="left")
    for column in ("container", "instances"):
        table.add_column(column, overflow="fold")
    for container in plan.proposed.containers:
        table.add_row(str(container.id), ", ".join(f"{i.component}[{i.task_id}]"
                                                   for i in container.instances))
    console.print(table)
    for component in sorted(plan.after):
        if plan.after[component] != plan.before[component]:
            console.print(f"{component}: parallelism {plan.before[component]} -> "
                          f"{plan.after[component]}")
    if len(plan.proposed.containers) != len(plan.current.containers):
        console.print(f"containers: {len(plan.current.containers)} -> "
                      f"{len(plan.proposed.containers)}")
    changes = plan.changes
    console.print(f"tasks added {changes['added'] or 'none'}, removed "
                  f"{changes['removed'] or 'none'}, moved {changes['moved'] or 'none'}")
    for consumer in plan.rekeyed:
        console.print(f"note: {consumer!r} is fields-grouped: its keys move between tasks "
                      "(state kept per key does not follow; see compat.storm_api.updatable)")
    for moving in plan.key_group_moves:
        size = (f", about {moving.approx_bytes:,} bytes of keyed state" if moving.approx_bytes
                else "")
        console.print(f"{moving.component}: {moving.moved} of {moving.groups} key groups move "
                      f"with their state{size}")
        for first, last, old, new in moving.ranges:
            groups = f"group {first}" if first == last else f"groups {first}-{last}"
            console.print(f"  {groups}: task index {old} -> {new}", highlight=False)


def _runtime_config(env: Env, name: str, values: tuple[str, ...], dry_run: bool) -> None:
    # deferred: CLI start-up time
    from engine.healthmgr.runtime_config import (
        RuntimeConfigError,
        parse_runtime_config,
        set_runtime_config,
    )

    try:
        toggles = parse_runtime_config(values)
    except RuntimeConfigError as exc:
        raise BadInput(str(exc)) from None
    if dry_run:
        for key, value in toggles.items():
            click.echo(f"would set {key}={value} (dry run: nothing changed)")
        return
    state = env.open_state()
    try:
        set_runtime_config(state, name, toggles)
    except RuntimeConfigError as exc:
        raise BadInput(f"cannot update {name!r}: {exc}") from None
    finally:
        state.close()
    for key, value in toggles.items():
        click.echo(f"updated {name!r}: {key}={value} (the Health Manager applies it at its "
                   "next tick)")
