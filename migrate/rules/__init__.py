"""The registry of migration rules, in the order they run."""

from __future__ import annotations

from migrate.errors import UnknownRule
from migrate.rules.base import Rule
from migrate.rules.config import ConfigRule
from migrate.rules.dependencies import DependenciesRule
from migrate.rules.flux import FluxRule
from migrate.rules.heronpy import HeronpyRule
from migrate.rules.heronpy_builder import HeronpyBuilderRule
from migrate.rules.imports import ImportsRule
from migrate.rules.kafka import KafkaRule
from migrate.rules.sparse_commands import SparseCommandsRule
from migrate.rules.stdout import StdoutRule
from migrate.rules.unsupported import UnsupportedRule

# the classes a rule id names: a source rule (libcst codemod) or one of the project rules
RuleClass = (type[Rule] | type[ConfigRule] | type[DependenciesRule] | type[SparseCommandsRule]
             | type[FluxRule])

# Source rules (libcst codemods, per file) and project rules (``apply(root)``, per project).
RULES: dict[str, RuleClass] = {
    rule.RULE_ID: rule
    for rule in (
        ImportsRule,
        UnsupportedRule,
        StdoutRule,
        KafkaRule,
        ConfigRule,
        DependenciesRule,
        SparseCommandsRule,
        FluxRule,
    )
}

# ``heron-migrate --heronpy``: a heronpy topology to the Storm API (streamparse). Its own
# set, never mixed into the default run: a streamparse project has nothing for it to do,
# and a heronpy project is moved once, on purpose.
HERONPY_RULES: dict[str, RuleClass] = {rule.RULE_ID: rule for rule in (
    HeronpyBuilderRule, HeronpyRule)}


def select_rules(only: list[str] | None = None, skip: list[str] | None = None,
                 heronpy: bool = False) -> list[type]:
    """The rules to run for ``--only``/``--skip`` (within the ``--heronpy`` set when
    ``heronpy``); an unknown id is an error, not ignored."""
    rules = HERONPY_RULES if heronpy else RULES
    unknown = [r for r in (only or []) + (skip or []) if r not in rules]
    if unknown:
        mode = " --heronpy" if heronpy else ""
        raise UnknownRule(f"unknown rule id(s){mode and ' with' + mode}: {', '.join(unknown)}; "
                          f"known: {', '.join(rules)} (see{mode} --list-rules)")
    chosen = [rules[r] for r in rules if not only or r in only]
    return [rule for rule in chosen if rule.RULE_ID not in (skip or [])]


__all__ = ["HERONPY_RULES", "RULES", "Rule", "select_rules"]
