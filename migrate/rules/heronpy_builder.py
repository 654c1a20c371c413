"""Rule ``heronpy-builder``: a heronpy ``TopologyBuilder`` script becomes a Topology class.

Heron's Python examples build their topology in ``if __name__ == '__main__':`` with
``TopologyBuilder(name=sys.argv[1])``, ``add_spout``/``add_bolt``/``add_spec``,
``set_config`` and ``build_and_submit()``. streamparse (and ``heron run``) take a
``Topology`` class whose name is the file's, so the main block becomes::

    class WordCountTopology(Topology):
        word_spout = WordSpout.spec(name="word_spout", par=2)
        count_bolt = CountBolt.spec(name="count_bolt", par=2, inputs={...}, config={...})
        config = {...}

still in heronpy's class DSL; the ``heronpy`` rule then moves it to streamparse, so this
rule alone turns a builder script into a heronpy Topology class. ``add_spout(name, cls,
par, config, optional_outputs)`` and ``add_bolt(name, cls, par, inputs, config,
optional_outputs)`` become ``cls.spec(...)`` with the same arguments by keyword; a
variable that only feeds ``set_config`` (``topology_config = {...}``) is written into
``config``; other plain assignments stay, in order, as class attributes. The name check
Heron's examples open with (``if len(sys.argv) != 2: ... sys.exit(1)``) goes: the
topology is named by its file. Any other statement in the main block (a loop, a call, a
branch) is not carried: the file is left unchanged and each such statement is an ERROR.
"""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, QualifiedNameProvider

from migrate.findings import Level
from migrate.rules.base import Rule
from migrate.rules.heronpy_tidy import drop_unused_imports

BUILDER = "heronpy.api.topology.TopologyBuilder"
_SPOUT_ARGS = ("name", "spout_cls", "par", "config", "optional_outputs")
_BOLT_ARGS = ("name", "bolt_cls", "par", "inputs", "config", "optional_outputs")
#: what a block's body holds: an indented block's statements, or the small statements of
#: a one-line suite (``if x: a = 1; b = 2``)
_Statement = cst.BaseStatement | cst.BaseSmallStatement


def class_name(path: str) -> str:
    """``word_count_topology.py`` -> ``WordCountTopology`` (a valid identifier)."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", Path(path).stem) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "HeronpyTopology"
    return name if not name[0].isdigit() else f"T{name}"


class _NotCarried(Exception):
    """A statement of the main block this rule cannot carry into a class."""

    def __init__(self, node: cst.CSTNode, why: str) -> None:
        super().__init__(why)
        self.node = node
        self.why = why


class HeronpyBuilderRule(Rule):
    """heronpy builder scripts to (heronpy) Topology classes."""

    RULE_ID = "heronpy-builder"
    DESCRIPTION = ("A heronpy TopologyBuilder main (`if __name__ == '__main__':`) becomes a "
                   "Topology class named after the file.")
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider)

    def __init__(self, *args: object, **kwargs: object) -> None:
        # passed through unchanged to libcst's codemod constructor, which checks them
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: new line -> original line, once the main became a class (None: nothing moved)
        self.line_map: dict[int, int] | None = None

    def _is_builder_call(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and any(
            q.name == BUILDER for q in self.get_metadata(QualifiedNameProvider, node.func, set()))

    # -- the module ---------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        # metadata (qualified names, positions) is on the original nodes: this rule
        # changes nothing before this point, so the original statements are read
        body = list(updated_node.body)
        for index, orig in enumerate(original_node.body):
            if not (isinstance(orig, cst.If) and m.matches(orig.test, m.Comparison(
                    left=m.Name("__name__"),
                    comparisons=[m.ComparisonTarget(m.Equal(), m.SimpleString())]))):
                continue
            if not any(self._builds(s) for s in orig.body.body):
                continue
            try:
                cls = self._class_for(orig)
            except _NotCarried as exc:
                self.record(exc.node, Level.ERROR,
                            f"builder main not rewritten: {exc.why}",
                            old=self.code_of(exc.node),
                            manual="move this out of the main block (or write the Topology "
                                   "class by hand) and run again")
                return updated_node
            body[index] = cls
            pos = self.get_metadata(PositionProvider, orig, None)
            moved = {id(cls): pos.start.line if isinstance(pos, CodeRange) else 1}
            self.record(orig, Level.INFO,
                        f"TopologyBuilder main became class {cls.name.value}: heron run and "
                        "streamparse name the topology after its file",
                        new=f"class {cls.name.value}(Topology): ...")
            module = drop_unused_imports(self._fix_import(updated_node.with_changes(
                body=body)), {"sys"})
            # later rules see the class, not the main: their findings are put back on the
            # lines they came from (migrate.transform reads line_map)
            self.line_map = self._line_map(module, moved)
            return module
        return updated_node

    def _builds(self, stmt: _Statement) -> bool:
        return isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Assign) and self._is_builder_call(s.value) for s in stmt.body)

    @staticmethod
    def _fix_import(module: cst.Module) -> cst.Module:
        """``TopologyBuilder`` imported from heronpy.api.topology: now ``Topology``. Only
        that statement is replaced, so every other node keeps its identity (the line map
        is made from node identities)."""
        body = list(module.body)
        for index, stmt in enumerate(body):
            if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1):
                continue
            node = stmt.body[0]
            if not isinstance(node, cst.ImportFrom) or node.module is None or \
                    get_full_name_for_node(node.module) != "heronpy.api.topology" or \
                    isinstance(node.names, cst.ImportStar):
                continue
            names: list[cst.ImportAlias] = []
            for alias in node.names:
                if get_full_name_for_node(alias.name) == "TopologyBuilder":
                    alias = alias.with_changes(name=cst.Name("Topology"), asname=None)
                if all(get_full_name_for_node(a.name) != get_full_name_for_node(alias.name)
                       for a in names):
                    names.append(alias)
            names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            body[index] = stmt.with_changes(body=[node.with_changes(names=names)])
        return module.with_changes(body=body)

    def _line_map(self, new: cst.Module, moved: dict[int, int]) -> dict[int, int]:
        """For each line of ``new``, the line of the original it came from: through the
        nodes both trees share (this rule moves nodes, it does not copy them), and
        ``moved`` (``id`` of a new node -> original line) for the nodes it built."""
        # (every value is a CodeRange: the provider's metadata, typed as object)
        original = {id(node): rng.start.line
                    for node, rng in self.metadata[PositionProvider].items()
                    if isinstance(rng, CodeRange)}
        original.update(moved)
        lines: dict[int, int] = {}
        wrapper = MetadataWrapper(new, unsafe_skip_copy=True)
        for node, rng in wrapper.resolve(PositionProvider).items():
            old = original.get(id(node))
            if old is not None:
                line = rng.start.line
                lines[line] = min(lines.get(line, old), old)
        return lines

    # -- the main block -----------------------------------------------------------------
    def _class_for(self, block: cst.If) -> cst.ClassDef:
        statements: list[_Statement] = list(block.body.body)
        builder, topology_name = self._builder(statements)
        config_vars = self._config_vars(statements, builder)
        kept: dict[str, cst.BaseExpression] = {}
        lines: list[cst.BaseStatement] = []
        config: cst.BaseExpression | None = None
        counter = 0
        for stmt in statements:
            if self._argv_check(stmt):
                continue
            if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
                raise _NotCarried(stmt, "a statement the rule cannot carry into a class")
            small = stmt.body[0]
            target, value = self._target_value(small)
            if isinstance(value, cst.Call) and self._is_builder_call(value):
                continue
            call = self._builder_method(value, builder)
            if call is None:
                if isinstance(small, cst.Assign) and target is not None:
                    if target in config_vars:
                        kept[target] = small.value  # the value _target_value read
                    else:
                        lines.append(stmt)
                    continue
                raise _NotCarried(stmt, "a statement the rule cannot carry into a class")
            method, args = call
            if method in ("add_spout", "add_bolt"):
                counter += 1
                attr, spec = self._spec(stmt, method, args, target, counter)
                lines.append(cst.SimpleStatementLine(
                    [cst.Assign([cst.AssignTarget(cst.Name(attr))], spec)],
                    leading_lines=stmt.leading_lines))
            elif method == "set_config" and len(args) == 1 and args[0].keyword is None:
                value = args[0].value
                config = kept.get(value.value, value) if isinstance(value, cst.Name) else value
            elif method == "add_spec" and all(isinstance(a.value, cst.Name) and not a.star
                                              for a in args):
                continue  # the specs are assigned above: each is a class attribute already
            elif method == "build_and_submit" and not args:
                continue
            else:
                raise _NotCarried(stmt, f"builder.{method}(...) with these arguments")
        if config is not None:
            lines.append(cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Name("config"))], config)]))
        if not lines:
            raise _NotCarried(block, "no component in the main block")
        name = class_name(self.context.filename or "topology")
        if topology_name is not None and topology_name != Path(
                self.context.filename or "").stem:
            self.record(block, Level.WARNING,
                        f"TopologyBuilder(name={topology_name!r}): the topology is now named "
                        "after its file", manual=f"rename the file to {topology_name}.py if "
                        "the name matters (kill, list, metrics use it)")
        lines[0] = lines[0].with_changes(leading_lines=[])
        return cst.ClassDef(name=cst.Name(name),
                            bases=[cst.Arg(cst.Name("Topology"))],
                            body=cst.IndentedBlock(body=lines),
                            leading_lines=[cst.EmptyLine()] * max(2, len(block.leading_lines)))

    def _builder(self, statements: list[_Statement]) -> tuple[str, str | None]:
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and self._is_builder_call(small.value) \
                            and isinstance(small.targets[0].target, cst.Name):
                        call = small.value
                        assert isinstance(call, cst.Call)
                        name = next((a.value for a in call.args
                                     if a.keyword is None or a.keyword.value == "name"), None)
                        literal = name.evaluated_value if isinstance(
                            name, cst.SimpleString) else None
                        return small.targets[0].target.value, (
                            literal if isinstance(literal, str) else None)
        raise _NotCarried(statements[0], "no `builder = TopologyBuilder(...)`")

    @staticmethod
    def _target_value(small: cst.BaseSmallStatement
                      ) -> tuple[str | None, cst.BaseExpression | None]:
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            return (target.value if isinstance(target, cst.Name) else None), small.value
        if isinstance(small, cst.Expr):
            return None, small.value
        return None, None

    @staticmethod
    def _builder_method(value: cst.BaseExpression | None,
                        builder: str) -> tuple[str, list[cst.Arg]] | None:
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and \
                isinstance(value.func.value, cst.Name) and value.func.value.value == builder:
            return value.func.attr.value, list(value.args)
        return None

    def _config_vars(self, statements: list[_Statement], builder: str) -> set[str]:
        """Variables passed to ``set_config`` and used nowhere else: written inline."""
        names: set[str] = set()
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    _, value = self._target_value(small)
                    call = self._builder_method(value, builder)
                    if call and call[0] == "set_config" and len(call[1]) == 1 and \
                            isinstance(call[1][0].value, cst.Name):
                        names.add(call[1][0].value.value)
        used = [n.value for s in statements for n in m.findall(s, m.Name())
                if isinstance(n, cst.Name)]
        return {n for n in names if used.count(n) == 2}  # assigned once, read once

    @staticmethod
    def _argv_check(stmt: _Statement) -> bool:
        """``if len(sys.argv) != 2: print(...); sys.exit(1)``: the name argument check."""
        if not isinstance(stmt, cst.If) or stmt.orelse is not None:
            return False
        mentions_argv = bool(m.findall(stmt.test, m.Attribute(m.Name("sys"), m.Name("argv"))))
        exits = bool(m.findall(stmt.body, m.Call(m.Attribute(m.Name("sys"), m.Name("exit")))))
        return mentions_argv and exits

    def _spec(self, stmt: cst.CSTNode, method: str, args: list[cst.Arg], target: str | None,
              counter: int) -> tuple[str, cst.Call]:
        params = _SPOUT_ARGS if method == "add_spout" else _BOLT_ARGS
        named: dict[str, cst.BaseExpression] = {}
        for position, arg in enumerate(args):
            if arg.star:
                raise _NotCarried(stmt, f"builder.{method}(*...)")
            key = arg.keyword.value if arg.keyword is not None else params[position] \
                if position < len(params) else None
            if key is None or key not in params:
                raise _NotCarried(stmt, f"builder.{method}(...) with an unknown argument")
            named[key] = arg.value
        cls = named.get(params[1])
        if cls is None or "name" not in named:
            raise _NotCarried(stmt, f"builder.{method}(...) without a name or class")
        spec_args = []
        for position, arg in enumerate(args):  # as written, each by keyword
            key = arg.keyword.value if arg.keyword is not None else params[position]
            if key == params[1]:
                continue
            if arg.keyword is None:
                arg = arg.with_changes(keyword=cst.Name(key), equal=cst.AssignEqual(
                    cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            spec_args.append(arg)
        spec_args[-1] = spec_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        attr = target
        if attr is None:
            name = named["name"]
            literal = name.evaluated_value if isinstance(name, cst.SimpleString) else None
            attr = literal if isinstance(literal, str) and literal.isidentifier() \
                and literal != "config" else f"component_{counter}"
        return attr, cst.Call(func=cst.Attribute(cls, cst.Name("spec")), args=spec_args)
