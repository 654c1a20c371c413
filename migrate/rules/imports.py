"""Rule ``imports``: imports and uses of streamparse/pystorm names move to ``compat.storm_api``.

Uses are found with ``QualifiedNameProvider``, never by spelling: a chain is rewritten
only when it resolves to an unaliased ``import streamparse...``/``import pystorm...``.
Aliased imports (``import streamparse as sp``, ``from streamparse import Bolt as B``) keep
their local names, so only the import statement changes.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from migrate.findings import Level
from migrate.modules import TARGET, has_name, is_source_module, target_dotted, target_module
from migrate.rules.base import Rule

NO_MODULE = "port this import by hand: compat.storm_api has no counterpart for {module}"


class ImportsRule(Rule):
    """Rewrite streamparse/pystorm imports and attribute chains to compat.storm_api."""

    RULE_ID = "imports"
    DESCRIPTION = "Imports and uses of streamparse/pystorm names become compat.storm_api."
    METADATA_DEPENDENCIES = (PositionProvider, QualifiedNameProvider, ParentNodeProvider)

    # -- import statements --------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # the names inside an import are not uses

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Import(self, original_node: cst.Import, updated_node: cst.Import) -> cst.Import:
        names = []
        for alias in updated_node.names:
            source = get_full_name_for_node(alias.name)
            if not is_source_module(source):
                names.append(alias)
                continue
            target = target_module(source)
            if target is None:
                self.record(original_node, Level.ERROR, f"no compat.storm_api module for {source}",
                            old=self.code_of(original_node), manual=NO_MODULE.format(module=source))
                names.append(alias)
                continue
            names.append(alias.with_changes(name=cst.parse_expression(target)))
        new_node = updated_node.with_changes(names=names)
        if not new_node.deep_equals(updated_node):
            self.record(original_node, Level.INFO, "import moved to compat.storm_api",
                        old=self.code_of(original_node), new=self.code_of(new_node))
        return new_node

    def leave_ImportFrom(self, original_node: cst.ImportFrom,
                         updated_node: cst.ImportFrom) -> cst.ImportFrom | cst.Import:
        if updated_node.relative or updated_node.module is None:
            return updated_node
        source = get_full_name_for_node(updated_node.module)
        if not is_source_module(source):
            return updated_node
        module_import = self._storm_module_import(original_node, source, updated_node.names)
        if module_import is not None:
            return module_import
        target = self._from_target(original_node, source, updated_node.names)
        if target is None:
            return updated_node
        new_node = updated_node.with_changes(module=cst.parse_expression(target))
        self.record(original_node, Level.INFO, f"import moved from {source} to {target}",
                    old=self.code_of(original_node), new=self.code_of(new_node))
        return new_node

    def _storm_module_import(self, node: cst.ImportFrom, source: str,
                             names: cst.ImportStar | Sequence[cst.ImportAlias]
                             ) -> cst.Import | None:
        """``from streamparse import storm [as s]`` imports a module that collapses onto
        compat.storm_api itself, so it becomes ``import compat.storm_api as storm`` (uses
        such as ``storm.Bolt`` then need no change). None for any other import."""
        if source != "streamparse" or isinstance(names, cst.ImportStar) or len(names) != 1:
            return None
        alias = names[0]
        if get_full_name_for_node(alias.name) != "storm":
            return None
        local = alias.asname.name if alias.asname is not None else cst.Name("storm")
        dotted = cst.parse_expression(TARGET)
        assert isinstance(dotted, cst.Attribute)  # TARGET is a dotted module name
        new_node = cst.Import(names=[cst.ImportAlias(name=dotted,
                                                     asname=cst.AsName(name=local))])
        self.record(node, Level.INFO, "import moved from streamparse.storm to compat.storm_api",
                    old=self.code_of(node), new=self.code_of(new_node))
        return new_node

    def _from_target(self, node: cst.ImportFrom, source: str,
                     names: cst.ImportStar | Sequence[cst.ImportAlias]) -> str | None:
        """The module a ``from source import ...`` should name, or None (reported) if none fits."""
        target = target_module(source)
        if isinstance(names, cst.ImportStar):
            if target is None:
                self.record(node, Level.ERROR, f"no compat.storm_api module for {source}",
                            old=self.code_of(node), manual=NO_MODULE.format(module=source))
            return target
        wanted = [get_full_name_for_node(alias.name) or "" for alias in names]
        for candidate in (target, TARGET):
            if candidate and all(has_name(candidate, name) for name in wanted):
                return candidate
        missing = [n for n in wanted if not has_name(target or TARGET, n)]
        manual = "replace these names by hand; the rest of the import is left as it was"
        if source == "streamparse" and "storm" in missing:
            manual = ("import the storm module on a line of its own (it becomes `import "
                      "compat.storm_api as storm`), then run heron-migrate again")
        self.record(node, Level.ERROR,
                    f"{', '.join(missing)} not provided by {target or TARGET} (from {source})",
                    old=self.code_of(node), manual=manual)
        return None

    # -- uses ---------------------------------------------------------------------------

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._rewrite_use(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute,
                        updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._rewrite_use(original_node, updated_node)

    def _rewrite_use(self, original: cst.Name | cst.Attribute,
                     updated: cst.BaseExpression) -> cst.BaseExpression:
        """Rewrite a maximal ``streamparse.x.y`` chain bound by an unaliased module import."""
        parent = self.get_metadata(ParentNodeProvider, original, None)
        if isinstance(parent, cst.Attribute) and (
            parent.value is original or parent.attr is original
        ):
            return updated  # the enclosing chain is handled as a whole
        text = get_full_name_for_node(original)
        if not is_source_module(text):
            self._check_aliased_use(original, text)
            return updated
        qualified = self.get_metadata(QualifiedNameProvider, original, set())
        if not any(q.name == text and q.source is QualifiedNameSource.IMPORT for q in qualified):
            return updated
        mapped = target_dotted(text)
        if mapped is None:
            self.record(original, Level.ERROR, f"no compat.storm_api counterpart for {text}",
                        old=text, manual=NO_MODULE.format(module=text))
            return updated
        new_text, module, first = mapped
        if first and not has_name(module, first):
            self.record(original, Level.WARNING, f"{module} has no {first} (used as {text})",
                        old=text, new=new_text, manual=f"check what replaces {first} in {module}")
        self.record(original, Level.INFO, "use moved to compat.storm_api", old=text, new=new_text)
        return cst.parse_expression(new_text)

    def _check_aliased_use(self, original: cst.Name | cst.Attribute, text: str | None) -> None:
        """A chain through an aliased module import (``import streamparse as sp`` then
        ``sp.Foo``) is left as written, since the alias now names compat.storm_api; warn
        when that module has no ``Foo``, or the code fails only when it runs."""
        if not text or "." not in text:
            return
        head, _, rest = text.partition(".")
        for q in self.get_metadata(QualifiedNameProvider, original, set()):
            if q.source is not QualifiedNameSource.IMPORT or not q.name.endswith("." + rest):
                continue
            module_source = q.name[: -len(rest) - 1]
            if not is_source_module(module_source):
                continue
            module = target_module(module_source)
            if module is None:
                continue  # not a module alias (a class imported under a name), or reported
            first = rest.split(".")[0]
            if not has_name(module, first):
                self.record(original, Level.WARNING,
                            f"{module} has no {first} (used as {text}, where {head} is "
                            f"{module_source})", old=text,
                            manual=f"check what replaces {first} in {module}")
            return
