"""Heron's command line for a topology file: ``FILE - [ARGS]`` and ``FILE module.Class
[ARGS]``, where everything after ``-`` or the class belongs to the topology's main
(``-r URL -t NAME`` are its own options, never ``heron``'s).

click would read ``-t`` after the file as ``heron run``'s ``--time``; this command class
splits the arguments first: ``heron``'s options may come before or after the file, and
the first ``-`` after it, or the first word after a ``.pex``/``.py`` file, starts the
topology's part, kept untouched in ``ctx.meta[MAIN_FORM]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

MAIN_FORM = "heron.topology_main"
_MAIN_FILES = (".pex", ".py")


@dataclass
class MainForm:
    """``-`` (run the file's main) or a ``module.ClassName``, and the arguments after it."""

    form: str
    args: list[str] = field(default_factory=list)


def split_topology_args(args: list[str], value_options: set[str],
                        file_index: int) -> tuple[list[str], MainForm | None]:
    """``heron``'s arguments and the topology's part; ``file_index`` is the file's place
    among the positional arguments (0 for ``run``, 1 for ``submit CLUSTER FILE``)."""
    seen, i = 0, 0
    file_name = ""
    while i < len(args):
        token = args[i]
        if token == "--":
            break
        if token == "-" and seen == file_index + 1:
            return args[:i], MainForm("-", list(args[i + 1:]))
        if token.startswith("-") and token != "-":
            i += 2 if token in value_options else 1
            continue
        if seen == file_index + 1 and file_name.endswith(_MAIN_FILES):
            return args[:i], MainForm(token, list(args[i + 1:]))
        if seen == file_index:
            file_name = token
        seen += 1
        i += 1
    return args, None


class TopologyArgsCommand(click.Command):
    """A click command whose FILE argument may be followed by the topology's own part."""

    def __init__(self, *args: Any, file_index: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.file_index = file_index

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        value_options = {opt for param in self.params if isinstance(param, click.Option)
                         and not param.is_flag and not param.count
                         for opt in (*param.opts, *param.secondary_opts)}
        head, main = split_topology_args(list(args), value_options, self.file_index)
        ctx.meta[MAIN_FORM] = main
        return super().parse_args(ctx, head)


def main_form(ctx: click.Context | None = None) -> MainForm | None:
    """The topology's part of the current command line, if it had one."""
    ctx = ctx or click.get_current_context()
    return ctx.meta.get(MAIN_FORM)
