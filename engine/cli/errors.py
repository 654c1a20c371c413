"""Which exceptions the CLI turns into one clean line, and with which exit code."""

from __future__ import annotations

from compat.storm_api.config import ConfigError
from compat.storm_api.project import ProjectError
from engine.serialization import SerializationError


def _optional(module: str, name: str) -> tuple[type[BaseException], ...]:
    try:
        mod = __import__(module, fromlist=[name])
        return (getattr(mod, name),)
    except (ImportError, AttributeError):
        return ()


#: Bad input: the project, the topology definition, the options. Exit code 2.
USER_ERRORS: tuple[type[BaseException], ...] = (
    ProjectError, ConfigError,
    *_optional("engine.plan.errors", "PlanningError"),
    *_optional("compat.storm_api.dsl.errors", "TopologyDefinitionError"),
)

#: The topology started but could not run. Exit code 1.
RUN_ERRORS: tuple[type[BaseException], ...] = (
    SerializationError,
    *_optional("compat.storm_api.local.errors", "LocalEngineError"),
    *_optional("compat.storm_api.local.executors", "FatalRunError"),
)


def one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split("\n")[:1]) if "\n" in text and len(text) > 400 else text
