"""Rule ``stdout``: ``print(...)`` in component code is reported; with ``--unsafe`` it
becomes ``self.logger.info(...)``.

Under Storm a print corrupts the multi-lang protocol on stdout; here it lands in the
component log, so code keeps working but output moves. The rewrite changes where and how
the text appears (log format, level), hence unsafe and always reported. Only prints
whose arguments map exactly onto a ``%s`` format (positional arguments, no ``sep``,
``end``, ``file``, ``flush``, no ``*args``) in a method with a ``self`` are rewritten.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import PositionProvider, QualifiedNameProvider, QualifiedNameSource

from migrate.findings import Level
from migrate.rules.base import Rule

_MODULES = ("streamparse", "streamparse.storm", "streamparse.storm.bolt",
            "streamparse.storm.spout", "streamparse.storm.component", "streamparse.bolt",
            "streamparse.spout", "streamparse.component", "pystorm", "pystorm.bolt",
            "pystorm.spout", "pystorm.component", "compat.storm_api", "compat.storm_api.bolt",
            "compat.storm_api.spout", "compat.storm_api.component")
_BASES = ("Bolt", "Spout", "BatchingBolt", "TicklessBatchingBolt", "ReliableSpout", "Component")
COMPONENT_BASES = frozenset(f"{m}.{b}" for m in _MODULES for b in _BASES)

REVIEW = "use self.logger (or self.log) instead; output of print goes to the component log"


class StdoutRule(Rule):
    """Report (and with --unsafe rewrite) print() calls inside spout/bolt classes."""

    RULE_ID = "stdout"
    DESCRIPTION = "Reports print() in component code; --unsafe rewrites it to self.logger.info()."
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self, *args: object, **kwargs: object) -> None:
        # passed through unchanged to libcst's codemod constructor, which checks them
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._components: set[str] = set()  # component classes of this file, by local name
        self._class_stack: list[bool] = []
        self._self_stack: list[str | None] = []

    def _is_component(self, node: cst.ClassDef) -> bool:
        for base in node.bases:
            names = {q.name for q in self.get_metadata(QualifiedNameProvider, base.value, set())}
            if names & COMPONENT_BASES:
                return True
            if isinstance(base.value, cst.Name) and base.value.value in self._components:
                return True
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        component = self._is_component(node)
        if component:
            self._components.add(node.name.value)
        self._class_stack.append(component)

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        self._class_stack.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params.params
        static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                     for d in node.decorators)
        in_class = bool(self._class_stack) and self._class_stack[-1] and not self._self_stack
        self._self_stack.append(params[0].name.value if params and in_class and not static
                                else None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._self_stack.pop()
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if not self._class_stack or not self._class_stack[-1] or not self._self_stack:
            return updated_node
        names = self.get_metadata(QualifiedNameProvider, original_node.func, set())
        if not any(q.name == "builtins.print" and q.source is QualifiedNameSource.BUILTIN
                   for q in names):
            return updated_node
        old = self.code_of(original_node)
        receiver = self._self_stack[0]
        simple = all(a.keyword is None and not a.star for a in updated_node.args)
        if not (self.unsafe and receiver and simple):
            why = "" if self.unsafe else " (--unsafe rewrites it to self.logger.info)"
            self.record(original_node, Level.WARNING,
                        f"print() in component code goes to the component log{why}",
                        old=old, manual=REVIEW)
            return updated_node
        fmt = " ".join(["%s"] * len(updated_node.args))  # print() logs an empty message
        args = [cst.Arg(cst.SimpleString(f'"{fmt}"'))]
        args += [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated_node.args]
        new = cst.Call(func=cst.parse_expression(f"{receiver}.logger.info"), args=args)
        self.record(original_node, Level.WARNING,
                    "unsafe rewrite: print() became self.logger.info() (log format and level "
                    "differ from stdout)", old=old, new=self.code_of(new),
                    manual="check the log level and format suit the message")
        return new
