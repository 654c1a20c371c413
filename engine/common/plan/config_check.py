"""Every runtime key the engine's roles read, checked once when a topology is loaded.

Why here: the Topology Master, the Stream Managers and the instances each parse the
topology's config when they start. A value they cannot use (``-o
topology.stateful.checkpoint.interval.seconds=abc``, ``topology.reliability.mode=EXACTLY_ONCE``)
used to be accepted by ``heron submit``, which said "submitted", and then made a role
crash-loop with the traceback in its log only. So the loader runs the very parsers the roles
run, on the topology's config and on each component's merged config (its own config wins,
as the instance merges it), and turns the first failure into one line naming the key and
the value (exit 2). The roles keep their checks: a stored topology may come from an older
submitter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from engine.common.plan.errors import InvalidConfigError
from engine.common.plan.topology_config import HEALTHMGR_MODE, HealthModeError, healthmgr_mode_on
from engine.common.process.restart_policy import RestartPolicy, RestartPolicyError
from engine.common.serialization import SerializationError, serializer_for_config
from engine.config.backpressure import wait_watermarks, watermarks
from engine.config.batching import batching
from engine.config.checkpointing import checkpointing
from engine.config.containers import check_container_sizing
from engine.config.credits import capacities
from engine.config.errors import ConfigError
from engine.config.execution import debug, receive_buffer_size, spout_wait_secs, workers
from engine.config.key_groups import key_groups
from engine.config.keys import with_defaults
from engine.config.multilang import shellbolt_max_pending, subprocess_timeout
from engine.config.reliability import reliability, tick_frequency
from engine.config.task_logs import task_logs

#: what each parser raises for a value it cannot use (its message names the key; the
#: key-group error is a ConfigError)
_CONFIG_ERRORS = (ConfigError, RestartPolicyError, SerializationError)


def check_runtime_config(config: Mapping[str, Any],
                         components: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Raise :class:`InvalidConfigError` (one line naming the key and the value, and the
    component when it is a component's own config) for the first runtime key of
    ``config`` or of a component's config that a role of the engine could not use.
    ``components``: component name -> its own config."""
    topology = with_defaults(dict(config))
    _check(topology, None)
    for name, own in (components or {}).items():
        if own:
            _check({**topology, **dict(own)}, name)


def _check(conf: dict[str, Any], component: str | None) -> None:
    checks: list[Callable[[dict[str, Any]], Any]] = [
        reliability, checkpointing, key_groups, tick_frequency, serializer_for_config,
        RestartPolicy.from_config, batching, watermarks, wait_watermarks, capacities,
        _health_mode, _shell_bridge, _executors, check_container_sizing]
    for check in checks:
        try:
            check(conf)
        except _CONFIG_ERRORS as exc:
            where = f"component {component!r}: " if component else ""
            raise InvalidConfigError(f"invalid config: {where}{exc}") from None


def _health_mode(conf: Mapping[str, Any]) -> None:
    try:
        healthmgr_mode_on(conf)
    except HealthModeError as exc:
        raise ConfigError(f"{HEALTHMGR_MODE} {exc}") from None


def _shell_bridge(conf: Mapping[str, Any]) -> None:
    subprocess_timeout(conf)
    shellbolt_max_pending(conf)


def _executors(conf: Mapping[str, Any]) -> None:
    """The keys read as plain numbers or switches (containers, inbox bound, spout sleep,
    debug and task logs): the readers the roles call, so submit refuses what a role would."""
    workers(conf)
    receive_buffer_size(conf)
    spout_wait_secs(conf)
    debug(conf)
    task_logs(conf)
