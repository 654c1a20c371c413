"""Rule ``heronpy``: heronpy components and Topology classes become streamparse's.

What maps one to one is rewritten (imports, ``api_constants`` to the strings they stand
for, ``Grouping.LOWEST`` to ``Grouping.GLOBAL``); where the two APIs differ in meaning
the code is made to mean what it meant under heronpy:

* a heronpy bolt anchors, acks and fails nothing by itself, a streamparse bolt does all
  three unless told not to: every heronpy bolt class gets ``auto_anchor``, ``auto_ack``
  and ``auto_fail = False``;
* heronpy runs a topology ATMOST_ONCE with ``max.spout.pending`` 100 unless its config
  says otherwise, Storm acks and leaves pending unbounded: a Topology class's config gets
  heronpy's defaults first (the topology's own keys still win).

``emit``/``ack``/``fail``, ``initialize(config, context)``, ``process``, ``process_tick``,
``next_tuple``, ``tup_id`` and ``spec(name=, inputs=, par=, config=)`` keep their
signatures and positional order, so calls need no change. What has no Storm-API
counterpart (window bolts, task hooks, custom groupings, metrics, the heronpy context's
methods, ``optional_outputs``, a tuple's ``roots``/``creation_time``) is reported as an
ERROR at each line that uses it and left as written. Uses are found by qualified name,
never by spelling.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from migrate.findings import Level
from migrate.rules.base import Rule
from migrate.rules.heronpy_api import (
    BOLT_BASES,
    CONFIG_WITHOUT_MEANING,
    CONSTANTS_MODULE,
    CONTEXT_INSTEAD,
    CONTEXT_METHODS,
    HERONPY_DEFAULTS,
    NAMES,
    TUPLE_ONLY,
    constant_value,
    is_heronpy,
    why_not,
)
from migrate.rules.heronpy_tidy import drop_unused_imports, merge_storm_imports

TOPOLOGY = "heronpy.api.topology.Topology"
AUTO_FLAGS = ("auto_anchor", "auto_ack", "auto_fail")


def _mapped(qualified: str) -> bool:
    return any(qualified == name or qualified.startswith(name + ".") for name in NAMES)


class HeronpyRule(Rule):
    """heronpy spouts, bolts and Topology classes to streamparse's API."""

    RULE_ID = "heronpy"
    DESCRIPTION = ("heronpy components and Topology classes become streamparse's; what has "
                   "no Storm-API counterpart is reported and left.")
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)

    def __init__(self, *args: object, **kwargs: object) -> None:
        # passed through unchanged to libcst's codemod constructor, which checks them
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._reported: set[tuple[int, str]] = set()
        self._classes: list[str] = []          # "bolt", "spout", "topology" or ""
        self._contexts: list[str | None] = []  # the context parameter of initialize()

    # -- helpers ------------------------------------------------------------------------
    def _qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def _once(self, node: cst.CSTNode, key: str, level: Level, message: str, **kw: str) -> None:
        pos = self.get_metadata(PositionProvider, node, None)
        line = pos.start.line if pos else 0
        if (line, key) not in self._reported:
            self._reported.add((line, key))
            self.record(node, level, message, **kw)

    # -- imports ------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            name = get_full_name_for_node(alias.name) or ""
            if is_heronpy(name) and name != CONSTANTS_MODULE:
                why, todo = why_not(name)
                self._once(node, name, Level.ERROR, f"import {name} left: {why}",
                           old=self.code_of(node), manual=todo)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine,
                                  updated_node: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.FlattenSentinel:
        if len(updated_node.body) != 1 or not isinstance(updated_node.body[0], cst.ImportFrom):
            return updated_node
        node = updated_node.body[0]
        if node.relative or node.module is None:
            return updated_node
        module = get_full_name_for_node(node.module) or ""
        if not is_heronpy(module):
            return updated_node
        if isinstance(node.names, cst.ImportStar):
            self.record(original_node, Level.ERROR, f"from {module} import * left as it is",
                        old=self.code_of(original_node),
                        manual="import the heronpy names one by one and run again")
            return updated_node
        if module == CONSTANTS_MODULE:
            return updated_node  # its names become strings; leave_Module drops it if unused
        return self._split_import(original_node, updated_node, node, module)

    def _split_import(self, original: cst.SimpleStatementLine,
                      updated: cst.SimpleStatementLine, node: cst.ImportFrom, module: str
                      ) -> cst.BaseStatement | cst.FlattenSentinel:
        """One ``from`` line per target module, the unmapped names left on heronpy's."""
        groups: dict[str, list[cst.ImportAlias]] = {}
        assert not isinstance(node.names, cst.ImportStar)
        for alias in node.names:
            name = get_full_name_for_node(alias.name) or ""
            target = NAMES.get(f"{module}.{name}")
            if target is None:
                why, todo = why_not(f"{module}.{name}")
                self._once(original, f"{module}.{name}", Level.ERROR,
                           f"{name} (from {module}) left: {why}",
                           old=self.code_of(original), manual=todo)
                groups.setdefault(module, []).append(alias)
                continue
            new_alias = alias
            if target[1] != name:
                new_alias = alias.with_changes(name=cst.Name(target[1]),
                                               asname=alias.asname or cst.AsName(cst.Name(name)))
            groups.setdefault(target[0], []).append(new_alias)
        if list(groups) == [module]:
            return updated
        lines: list[cst.SimpleStatementLine] = []
        for target_module, aliases in groups.items():
            aliases = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
            stmt = node.with_changes(module=cst.parse_expression(target_module), names=aliases,
                                     lpar=None, rpar=None)
            lines.append(updated.with_changes(body=[stmt]) if not lines
                         else cst.SimpleStatementLine(body=[stmt]))
        new = cst.FlattenSentinel(lines)
        self.record(original, Level.INFO, "heronpy import moved to the Storm API",
                    old=self.code_of(original),
                    new="\n".join(self.code_of(line) for line in lines))
        return new

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return merge_storm_imports(drop_unused_imports(updated_node, {CONSTANTS_MODULE}))

    # -- classes ------------------------------------------------------------------------
    def _kind(self, node: cst.ClassDef) -> str:
        names = set().union(*(self._qualified(b.value) for b in node.bases)) if node.bases \
            else set()
        if names & BOLT_BASES:
            return "bolt"
        if TOPOLOGY in names:
            return "topology"
        if any(is_heronpy(n) for n in names):
            return "component"
        return ""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(self._kind(node))

    def leave_ClassDef(self, original_node: cst.ClassDef,
                       updated_node: cst.ClassDef) -> cst.ClassDef:
        kind = self._classes.pop()
        if kind == "bolt":
            return self._bolt_flags(original_node, updated_node)
        if kind == "topology":
            return self._topology_config(original_node, updated_node)
        return updated_node

    @staticmethod
    def _assigned(
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement]
    ) -> dict[str, cst.Assign]:
        found = {}
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                            isinstance(small.targets[0].target, cst.Name):
                        found[small.targets[0].target.value] = small
        return found

    @staticmethod
    def _insert_at_top(node: cst.ClassDef, lines: Sequence[cst.BaseStatement]) -> cst.ClassDef:
        body = list(node.body.body)
        at = 0
        if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(
                body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value,
                                                          (cst.SimpleString,
                                                           cst.ConcatenatedString)):
            at = 1  # after the docstring
        body[at:at] = lines
        return node.with_changes(body=node.body.with_changes(body=body))

    def _bolt_flags(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        present = self._assigned(updated.body.body)
        missing = [f for f in AUTO_FLAGS if f not in present]
        if not missing:
            return updated
        lines = [cst.parse_statement(f"{flag} = False") for flag in missing]
        self.record(original, Level.INFO,
                    f"bolt {original.name.value}: heronpy bolts anchor, ack and fail only when "
                    f"told; {', '.join(missing)} set to False so streamparse does not either",
                    new="; ".join(f"{f} = False" for f in missing))
        return self._insert_at_top(updated, lines)

    def _topology_config(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        defaults = [cst.DictElement(cst.SimpleString(repr(k)), cst.parse_expression(repr(v)))
                    for k, v in HERONPY_DEFAULTS.items()]
        assign = self._assigned(updated.body.body).get("config")
        text = ", ".join(f"{k!r}: {v!r}" for k, v in HERONPY_DEFAULTS.items())
        if assign is None:
            self.record(original, Level.INFO,
                        f"topology {original.name.value}: heronpy's defaults written as its "
                        "config (Storm acks and leaves spout pending unbounded by default)",
                        new=f"config = {{{text}}}")
            return self._insert_at_top(updated, [cst.parse_statement(f"config = {{{text}}}")])
        value = assign.value
        if isinstance(value, cst.Dict):
            keys = {self._key(e.key) for e in value.elements if isinstance(e, cst.DictElement)}
            first = [d for d in defaults if self._key(d.key) not in keys]
            if not first:
                return updated
            text = ", ".join(self.code_of(d) for d in first)
            new_value: cst.BaseExpression = value.with_changes(
                elements=[*first, *value.elements])
        else:
            new_value = cst.Dict([*defaults, cst.StarredDictElement(value)])
        self.record(original, Level.INFO,
                    f"topology {original.name.value}: heronpy's defaults put first in its "
                    "config (its own keys win); Storm's differ", new=text)
        replaced = updated.deep_replace(assign, assign.with_changes(value=new_value))
        # the class is not the assignment it replaces in, so a class comes back
        assert isinstance(replaced, cst.ClassDef)
        return replaced

    @staticmethod
    def _key(node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.SimpleString):
            return str(node.evaluated_value)
        return None

    # -- context, tuples, specs ---------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params.params
        in_component = bool(self._classes) and self._classes[-1] in ("bolt", "component")
        ctx = None
        if in_component and node.name.value == "initialize" and len(params) >= 3:
            ctx = params[2].name.value
        self._contexts.append(ctx)

    def leave_FunctionDef(self, original_node: cst.FunctionDef,
                          updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self._contexts.pop()
        return updated_node

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "spec":
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "optional_outputs":
                    self.record(node, Level.ERROR,
                                "spec(optional_outputs=...) left: streamparse specs take no "
                                "extra outputs", old=self.code_of(arg),
                                manual="add the streams to the component class's outputs")
        if "heronpy.api.stream.Grouping.custom" in self._qualified(func):
            why, todo = why_not("heronpy.api.custom_grouping")
            self._once(node, "custom", Level.ERROR, f"Grouping.custom(...) left: {why}",
                       old=self.code_of(node), manual=todo)
        ctx = next((c for c in reversed(self._contexts) if c), None)
        if ctx and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.value.value == ctx and func.attr.value in CONTEXT_METHODS:
            method = func.attr.value
            instead = CONTEXT_INSTEAD.get(method)
            self.record(node, Level.ERROR,
                        f"{ctx}.{method}() left: Storm's context is a dict, heronpy's "
                        "TopologyContext methods do not exist there", old=self.code_of(node),
                        manual=f"use {instead}" if instead else
                        "drop the call or keep the component as heronpy")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = node.evaluated_value
        if isinstance(value, str) and value in CONFIG_WITHOUT_MEANING:
            why, todo = CONFIG_WITHOUT_MEANING[value]
            self._once(node, value, Level.ERROR, f"config {value!r} left: {why}",
                       old=self.code_of(node), manual=todo)

    # -- uses ---------------------------------------------------------------------------
    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._use(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.BaseExpression:
        if original_node.attr.value in TUPLE_ONLY and any(self._classes):
            self._once(original_node, original_node.attr.value, Level.ERROR,
                       f"tuple .{original_node.attr.value} left: streamparse's Tuple has no "
                       f"{original_node.attr.value}", old=self.code_of(original_node),
                       manual="drop it, or carry the value in the tuple's fields")
        return self._use(original_node, updated_node)

    def _use(self, original: cst.Name | cst.Attribute,
             updated: cst.BaseExpression) -> cst.BaseExpression:
        parent = self.get_metadata(ParentNodeProvider, original, None)
        if isinstance(parent, cst.Attribute) and parent.value is original:
            return updated  # the enclosing chain is handled as a whole
        if isinstance(parent, cst.Attribute) and parent.attr is original:
            return updated
        names = {q for q in self._qualified(original) if is_heronpy(q)}
        if not names:
            return updated
        name = sorted(names)[0]
        if name.startswith(CONSTANTS_MODULE + "."):
            return self._constant(original, updated, name)
        if name == "heronpy.api.stream.Grouping.LOWEST" and isinstance(updated, cst.Attribute):
            self.record(original, Level.INFO, "Grouping.LOWEST is Storm's GLOBAL (the lowest "
                        "task)", old=self.code_of(original), new="Grouping.GLOBAL")
            return updated.with_changes(attr=cst.Name("GLOBAL"))
        if name == "heronpy.api.stream.Grouping.DIRECT":
            self._once(original, name, Level.ERROR, "Grouping.DIRECT left: heronpy refuses "
                       "it as a subscription", old=self.code_of(original),
                       manual="subscribe with another grouping")
        elif not _mapped(name) and not name.startswith("heronpy.api.stream.Grouping.custom"):
            why, todo = why_not(name)
            self._once(original, name, Level.ERROR, f"{self.code_of(original)} ({name}) left: "
                       f"{why}", old=self.code_of(original), manual=todo)
        return updated

    def _constant(self, original: cst.CSTNode, updated: cst.BaseExpression,
                  name: str) -> cst.BaseExpression:
        value = constant_value(name[len(CONSTANTS_MODULE) + 1:])
        if value is None:
            self._once(original, name, Level.ERROR, f"{name} is not a heronpy constant",
                       old=self.code_of(original), manual="check the name")
            return updated
        new = cst.SimpleString(repr(value))
        if value in CONFIG_WITHOUT_MEANING:
            why, todo = CONFIG_WITHOUT_MEANING[value]
            self._once(original, value, Level.ERROR, f"config {value!r} kept but {why}",
                       old=self.code_of(original), new=new.value, manual=todo)
        else:
            self.record(original, Level.INFO, "heronpy constant written as its value",
                        old=self.code_of(original), new=new.value)
        return new
