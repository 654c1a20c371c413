"""YAML that remembers where each mapping, key and list item came from.

Every message about a Flux file names ``FILE:LINE``, so the loader keeps the marks
PyYAML's composer already has: a mapping becomes a :class:`MarkedDict` (its own line
and the line of each key), a sequence a :class:`MarkedList` (its line and each item's).
Scalars stay plain Python values. Safe loading only: a Flux file is data.
"""

from __future__ import annotations

from typing import Any

import yaml

from .errors import FluxError, Where

__all__ = ["MarkedDict", "MarkedList", "load_yaml"]


class MarkedDict(dict[str, Any]):
    """A YAML mapping with its position and each key's line."""

    file: str = "<yaml>"
    line: int = 1

    def __init__(self) -> None:
        super().__init__()
        self.key_lines: dict[Any, int] = {}

    @property
    def where(self) -> Where:
        return Where(self.file, self.line)

    def where_of(self, key: Any) -> Where:
        """Where ``key`` is written (the mapping's own line when it is absent)."""
        return Where(self.file, self.key_lines.get(key, self.line))


class MarkedList(list[Any]):
    """A YAML sequence with its position and each item's line."""

    file: str = "<yaml>"
    line: int = 1

    def __init__(self) -> None:
        super().__init__()
        self.item_lines: list[int] = []

    @property
    def where(self) -> Where:
        return Where(self.file, self.line)

    def where_of(self, index: int) -> Where:
        lines = self.item_lines
        return Where(self.file, lines[index] if 0 <= index < len(lines) else self.line)


class _MarkedLoader(yaml.SafeLoader):
    flux_file = "<yaml>"


def _construct_mapping(loader: _MarkedLoader, node: yaml.MappingNode) -> Any:
    data = MarkedDict()
    data.file, data.line = loader.flux_file, node.start_mark.line + 1
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise FluxError(Where(loader.flux_file, key_node.start_mark.line + 1),
                            f"a mapping key must be a plain value, not {key!r}") from None
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_lines[key] = key_node.start_mark.line + 1


def _construct_sequence(loader: _MarkedLoader, node: yaml.SequenceNode) -> Any:
    data = MarkedList()
    data.file, data.line = loader.flux_file, node.start_mark.line + 1
    yield data
    for child in node.value:
        data.append(loader.construct_object(child, deep=True))
        data.item_lines.append(child.start_mark.line + 1)


_MarkedLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_MarkedLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence)


def load_yaml(text: str, source: str) -> MarkedDict:
    """Parse ``text`` (the file ``source``) into a :class:`MarkedDict`; a FluxError at
    the offending line when it is not YAML or not a mapping at the top."""
    loader = _MarkedLoader(text)
    loader.flux_file = source
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        problem = exc.problem or exc.context or "invalid YAML"
        raise FluxError(Where(source, line), f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise FluxError(Where(source, 1), f"invalid YAML: {exc}") from None
    finally:
        loader.dispose()
    if data is None:
        raise FluxError(Where(source, 1), "the file is empty; a Flux topology is a YAML "
                                          "mapping with name, spouts, bolts and streams")
    if not isinstance(data, MarkedDict):
        raise FluxError(Where(source, 1), "the top level must be a YAML mapping "
                                          f"(name, config, spouts, ...), not {type(data).__name__}")
    return data
