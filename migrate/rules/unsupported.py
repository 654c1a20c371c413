"""Rule ``unsupported``: Java components and Java custom groupings are reported as ERROR.

The engines run Python only (the plan compiler rejects Java components and Java custom
groupings), so these cannot be rewritten: a person has to port the component to Python
(or to a ShellBolt/ShellSpout) and the grouping to a Python ``Grouping.custom``. The
code is left untouched. Names are matched by qualified name, before or after the
``imports`` rule, so the rule works in either order.

Specs naming Storm's Kafka classes belong to the ``kafka`` rule when it runs too: it
rewrites them to the native connectors, or reports the ones it cannot map with what to
do, so reporting them here as well would count one problem twice.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider

from migrate.findings import Level
from migrate.rules.base import Rule
from migrate.rules.java import (
    JAVA_CLASSES,
    JAVA_GROUPINGS,
    is_storm_kafka,
    java_role,
    spec_class_name,
)

PORT_COMPONENT = ("port the Java component to a Python Spout/Bolt (or run it as a "
                  "ShellSpout/ShellBolt); the engines run Python only")
PORT_GROUPING = "replace the Java grouping with Grouping.custom(<Python CustomGrouping class>)"


class UnsupportedRule(Rule):
    """Report Java components and Java custom groupings; never rewrite them."""

    RULE_ID = "unsupported"
    DESCRIPTION = (
        "Reports JavaSpout/JavaBolt specs and Java custom groupings as ERROR (manual port)."
    )
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def visit_Call(self, node: cst.Call) -> None:
        names = self._qualified(node.func)
        text = self.code_of(node)
        role = java_role(names)
        if role is not None:
            if self._kafka_rule_owns(node, role):
                return
            self.record(node, Level.ERROR, "Java component spec: the engines cannot run it",
                        old=text, manual=PORT_COMPONENT)
        elif names & JAVA_GROUPINGS:
            self.record(node, Level.ERROR, "Java custom grouping: the engines cannot run it",
                        old=text, manual=PORT_GROUPING)

    def _kafka_rule_owns(self, node: cst.Call, role: str) -> bool:
        """True when the ``kafka`` rule runs in this migration and the spec names a Storm
        Kafka class, so that rule rewrites or reports it."""
        return (self.selected is not None and "kafka" in self.selected
                and is_storm_kafka(spec_class_name(node, role), role))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            if self._qualified(base.value) & JAVA_CLASSES:
                self.record(
                    node,
                    Level.ERROR,
                    f"{node.name.value} subclasses a Java component: the engines cannot run it",
                    old=self.code_of(base.value),
                    manual=PORT_COMPONENT,
                )
