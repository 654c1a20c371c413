"""Which exceptions the CLI turns into one clean line, and with which exit code."""

from __future__ import annotations

from compat.storm_api.dsl.errors import TopologyDefinitionError
from compat.storm_api.project import ProjectError
from engine.common.cluster.config import ClusterConfigError
from engine.common.cluster.package import PackageError
from engine.common.plan.errors import PlanningError
from engine.common.runtime.errors import FatalRunError, LocalEngineError
from engine.common.security.private import UnsafePathError
from engine.common.serialization import SerializationError
from engine.config.errors import ConfigError
from engine.scheduler.kubernetes.errors import (
    KubernetesClientMissing,
    KubernetesConfigError,
    KubernetesSchedulerError,
)

#: Bad input: the project, the topology definition, the options, and a directory or file
#: another user owns or can write (the heron home, a state root, the runtime root, a
#: digest file: docs/security.md). Exit code 2.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ProjectError, ConfigError, PlanningError, TopologyDefinitionError, UnsafePathError,
    ClusterConfigError, PackageError, KubernetesConfigError, KubernetesClientMissing)

#: The topology started but could not run. Exit code 1.
RUN_ERRORS: tuple[type[BaseException], ...] = (
    SerializationError, LocalEngineError, FatalRunError, KubernetesSchedulerError)


def one_line(exc: BaseException) -> str:
    """The error's message; only its first line when it is long and multi-line."""
    text = str(exc).strip() or type(exc).__name__
    return text.split("\n", 1)[0] if "\n" in text and len(text) > 400 else text
