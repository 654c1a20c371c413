"""Checks a topology's components ask for before anything is launched.

A component class may define ``preflight(name, conf)`` (a classmethod; our extension,
no Storm counterpart): given the config its tasks will get (the topology's, with the
component's own over it), it raises ``ValueError`` when the topology cannot work, such
as a Kafka spout whose brokers do not answer or whose topic does not exist. Found inside
the tasks, such a problem is a crash loop until a time limit; found here it is one line
naming the component and the setting, and ``heron run`` exits 2 without starting
anything. It runs where the topology is launched from: ``heron run``, and ``heron
submit`` to the local cluster (a remote cluster's nodes may reach what the submitting
machine cannot).
"""

from __future__ import annotations

from typing import Any

from .errors import PlanningError

__all__ = ["PreflightError", "preflight"]


class PreflightError(PlanningError):
    """A component's own check before start failed (the message names it)."""


def preflight(compiled: Any) -> None:
    """Run every component class's ``preflight`` with its merged config."""
    plan = compiled.plan
    for name, cls in compiled.component_classes.items():
        check = getattr(cls, "preflight", None)
        if not callable(check):
            continue
        conf = {**dict(plan.config), **dict(plan.components[name].config)}
        try:
            check(name, conf)
        except ValueError as exc:
            text = str(exc)
            raise PreflightError(text if text.startswith(f"{name}:")
                                 else f"{name}: {text}", component=name) from None
