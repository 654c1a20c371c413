"""``heron submit CLUSTER[/ROLE[/ENV]] PROJECT`` for a cluster other than this machine.

The cluster is described in ``HOME/conf/CLUSTER/`` (engine/cluster/config.py). Slurm runs
its scheduler as a service on this machine (as ``local`` does), which submits one job
per container and keeps them running; ``heron kill|restart|update`` talk to that
service. What follows the same steps everywhere (state, package, upload) is
engine/cluster/submit.py.
"""

from __future__ import annotations

from typing import Any

import click

from engine.cli.topology_commands import BadInput, CommandError, Env, planned_components


def submit_to_remote_cluster(config: Any, ref: Any, loaded: Any, submission: Any, env: Env, *,
                             deactivated: bool, multilang: bool,
                             multilang_serializer: str) -> None:
    from engine.cluster.submit import cluster_state_spec, submit_to_cluster, withdraw
    from engine.deploy import TopologyExistsError
    from engine.packing import PackingError
    from engine.scheduler import SchedulerStartError, start_detached, wait_until_serving
    from engine.statemgr import StateError

    name = loaded.plan.name
    if config.scheduler != "slurm":
        raise BadInput(f"cluster {config.name!r}: the {config.scheduler} scheduler submits "
                       f"with its own command (see docs/clusters.md)")
    working_dir = env.working_dir(name)
    state_spec = cluster_state_spec(config, working_dir)
    try:
        state = state_spec.open()
    except StateError as exc:
        raise CommandError(f"state manager ({state_spec.describe()}): {exc}") from None
    try:
        if state.get("topologies", name) is not None:
            raise BadInput(f"topology {name!r} is already running on {config.name}; "
                           f"heron kill {name} --cluster {config.name} first")
        try:
            submitted = submit_to_cluster(config, ref, loaded, submission, working_dir, state,
                                          state_spec, deactivated=deactivated,
                                          multilang=multilang,
                                          multilang_serializer=multilang_serializer)
        except (TopologyExistsError, PackingError) as exc:
            raise BadInput(str(exc)) from None
        spec = submitted.spec
        proc = start_detached(spec)
        try:
            wait_until_serving(spec, proc, state)
        except SchedulerStartError as exc:
            withdraw(config, spec, state)
            raise CommandError(f"{name}: {exc}") from None
        packing = state.get("packingplans", name)
    finally:
        state.close()
    containers = len(packing.container_plans)
    click.echo(f"submitted topology {name!r} ({spec.topology_id}) to {ref}: {containers} "
               f"container{'s' if containers != 1 else ''} + Topology Master as "
               f"{config.scheduler} jobs{', deactivated' if deactivated else ''}")
    click.echo("  components:")
    for line in planned_components(loaded.plan):
        click.echo(f"    {line}")
    click.echo(f"  package:     {spec.package_url} (sha256 {spec.package_sha256[:12]}…)")
    click.echo(f"  scheduler:   {spec.process_log('scheduler')}")
    click.echo(f"  state:       {spec.state.describe()}")
    click.echo(f"  control it:  heron list|kill|restart|update ... --cluster {config.name}")
