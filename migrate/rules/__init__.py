"""The registry of migration rules, in the order they run."""

from __future__ import annotations

from migrate.errors import UnknownRule
from migrate.rules.base import Rule
from migrate.rules.config import ConfigRule
from migrate.rules.dependencies import DependenciesRule
from migrate.rules.flux import FluxRule
from migrate.rules.imports import ImportsRule
from migrate.rules.kafka import KafkaRule
from migrate.rules.sparse_commands import SparseCommandsRule
from migrate.rules.stdout import StdoutRule
from migrate.rules.unsupported import UnsupportedRule

# Source rules (libcst codemods, per file) and project rules (``apply(root)``, per project).
RULES: dict[str, type] = {rule.RULE_ID: rule for rule in (
    ImportsRule, UnsupportedRule, StdoutRule, KafkaRule, ConfigRule, DependenciesRule, SparseCommandsRule,
    FluxRule)}


def select_rules(only: list[str] | None = None, skip: list[str] | None = None) -> list[type]:
    """The rules to run for ``--only``/``--skip``; an unknown id is an error, not ignored."""
    unknown = [r for r in (only or []) + (skip or []) if r not in RULES]
    if unknown:
        raise UnknownRule(f"unknown rule id(s): {', '.join(unknown)}; "
                          f"known: {', '.join(RULES)} (see --list-rules)")
    chosen = [RULES[r] for r in RULES if not only or r in only]
    return [rule for rule in chosen if rule.RULE_ID not in (skip or [])]


__all__ = ["RULES", "Rule", "select_rules"]
