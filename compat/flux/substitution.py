"""``${...}`` placeholders, replaced line by line in the text before YAML parses it.

Flux's rules (flux-core ``FluxParser``): ``${name}`` takes the filter's property
``name``; ``${ENV-NAME}`` takes environment variable ``NAME``, only with
``--env-filter`` (without it, ``ENV-NAME`` is looked up as a property, as Flux does);
``${name[i]}`` takes element ``i`` of a list property written ``["a", "b"]``. A
placeholder with no value stays as it is, with a warning. Substituting before parsing
means a value can carry YAML (a list, a number), exactly as in Storm.

One difference: Flux replaces only the last placeholder of a line (its pattern is
greedy); we replace every placeholder on a line, which gives the same result for every
file that works on Storm and the expected one for a line with two.

The values a substitution used are returned, so a process that rebuilds the topology
later (a heron instance, a cluster node) substitutes exactly the same text without the
filter file or the environment of the submitting shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import FluxError, Where

__all__ = ["Substituted", "substitute"]

_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_LIST_ITEM = re.compile(r"^(?P<list>.+)\[(?P<index>\d+)\]$")


@dataclass
class Substituted:
    """The text after substitution, the values used (placeholder body -> text), and one
    warning line per placeholder left as it was."""

    text: str
    values: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def substitute(text: str, source: str, *, properties: Mapping[str, str] | None = None,
               env_filter: bool = False, environ: Mapping[str, str] | None = None,
               recorded: Mapping[str, str] | None = None) -> Substituted:
    """Replace the placeholders of ``text`` (the file ``source``, for messages).

    ``recorded``, when given, is the ``values`` of an earlier substitution and is the
    only source of values (the filter and the environment are not consulted).
    """
    props = properties or {}
    env = environ or {}
    result = Substituted(text="")
    out_lines = []
    for number, line in enumerate(text.split("\n"), start=1):
        if "${" not in line or line.lstrip().startswith("#"):
            out_lines.append(line)
            continue
        where = Where(source, number)

        def replace(match: re.Match[str], where: Where = where) -> str:
            body = match.group(1)
            if recorded is not None:
                value = recorded.get(body)
            else:
                value = _lookup(body, props, env_filter, env, where)
            if value is None:
                result.warnings.append(f"{where}: no value for ${{{body}}} "
                                       f"({_hint(body, env_filter)}); left as it is")
                return match.group(0)
            result.values[body] = value
            return value

        out_lines.append(_PLACEHOLDER.sub(replace, line))
    result.text = "\n".join(out_lines)
    return result


def _lookup(body: str, props: Mapping[str, str], env_filter: bool,
            env: Mapping[str, str], where: Where) -> str | None:
    item = _LIST_ITEM.match(body)
    if item is not None:
        listed = props.get(item.group("list"))
        if listed is None:
            return None
        return _list_element(listed, int(item.group("index")), body, where)
    if env_filter and body.startswith("ENV-"):
        return env.get(body[4:])
    return props.get(body)


def _list_element(listed: str, index: int, body: str, where: Where) -> str:
    """Element ``index`` of a list property ``["a", "b"]``: brackets, blanks and the
    quotes around each element removed, as Flux does."""
    inner = listed.strip()
    if not (inner.startswith("[") and inner.endswith("]")):
        raise FluxError(where, f"${{{body}}}: property {body.split('[')[0]!r} is not a "
                               f"list like [\"a\", \"b\"] (it is {listed!r})")
    elements = [e.strip() for e in inner[1:-1].split(",")]
    if index >= len(elements):
        raise FluxError(where, f"${{{body}}}: list property has {len(elements)} "
                               f"element(s), no index {index}")
    element = elements[index]
    if len(element) >= 2 and element[0] == element[-1] and element[0] in "\"'":
        element = element[1:-1]
    return element


def _hint(body: str, env_filter: bool) -> str:
    if body.startswith("ENV-") and not env_filter:
        return "environment placeholders need --env-filter"
    if body.startswith("ENV-"):
        return f"environment variable {body[4:]} is not set"
    return "not in the --filter properties"
