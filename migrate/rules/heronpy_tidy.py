"""Tidying after the heronpy rules: imports left unused go, Storm-API imports merge.

libcst's ``RemoveImportsVisitor`` drops a statement's blank lines with it, which glues
import groups together; these helpers keep the layout a person wrote.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

#: modules whose ``from M import ...`` lines are merged into the first such line
MERGED = ("streamparse", "compat.storm_api")


def _import_of(stmt: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(
            stmt.body[0], (cst.Import, cst.ImportFrom)):
        return stmt.body[0]
    return None


def _bound(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (get_full_name_for_node(alias.name) or "").split(".")[0]


def _used(module: cst.Module, name: str) -> bool:
    """Whether ``name`` is read anywhere but in import statements."""
    for stmt in module.body:
        if _import_of(stmt) is None and m.findall(stmt, m.Name(name)):
            return True
    return False


def drop_unused_imports(module: cst.Module, dotted: set[str]) -> cst.Module:
    """Remove top-level ``import X [as Y]`` of the modules in ``dotted`` (and ``from X
    import ...`` names of them) that nothing reads any more; a removed line's blank lines
    go to the next statement."""
    body: list[cst.BaseStatement] = []
    carry: list[cst.EmptyLine] | None = None
    for stmt in module.body:
        node = _import_of(stmt)
        names = node.names if node is not None else None
        if node is not None and names is not None and not isinstance(names, cst.ImportStar):
            source = get_full_name_for_node(node.module) if isinstance(
                node, cst.ImportFrom) and node.module is not None else None
            keep = [a for a in names
                    if not ((source in dotted if source else
                             get_full_name_for_node(a.name) in dotted)
                            and not _used(module, _bound(a)))]
            if not keep:
                if carry is None:
                    carry = list(stmt.leading_lines)
                continue
            if len(keep) != len(names):
                keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                stmt = stmt.with_changes(body=[node.with_changes(names=keep)])
        if carry is not None:
            stmt = stmt.with_changes(leading_lines=[*carry, *stmt.leading_lines][:2]) \
                if hasattr(stmt, "leading_lines") else stmt
            carry = None
        body.append(stmt)
    return module.with_changes(body=body)


def merge_storm_imports(module: cst.Module) -> cst.Module:
    """``from streamparse import A`` then ``from streamparse import B``: one line."""
    body: list[cst.BaseStatement] = []
    first: dict[str, int] = {}
    for stmt in module.body:
        node = _import_of(stmt)
        source = get_full_name_for_node(node.module) if isinstance(
            node, cst.ImportFrom) and node.module is not None and not node.relative else None
        # (a source is named only for a from-import: the isinstance check tells the type
        # checker so)
        if source in MERGED and isinstance(node, cst.ImportFrom) \
                and not isinstance(node.names, cst.ImportStar):
            if source in first:
                at = first[source]
                head = body[at]
                head_node = _import_of(head)
                assert isinstance(head_node, cst.ImportFrom)
                assert not isinstance(head_node.names, cst.ImportStar)
                known = {(get_full_name_for_node(a.name), _bound(a)) for a in head_node.names}
                extra = [a for a in node.names
                         if (get_full_name_for_node(a.name), _bound(a)) not in known]
                names = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(
                    " "))) for a in [*head_node.names, *extra]]
                names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                body[at] = head.with_changes(body=[head_node.with_changes(names=names)])
                continue
            first[source] = len(body)
        body.append(stmt)
    return module.with_changes(body=body)
