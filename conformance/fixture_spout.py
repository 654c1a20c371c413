"""Running a user's topology on a finite input: the fixture spout and ``--max-tuples``.

``heron-conformance run --topology PROJECT --input FIXTURE.jsonl`` replaces every spout
of the topology by a fixture spout that emits the fixture's rows and then reports
``is_exhausted()``, so each engine's run ends by itself on the same input.
``--max-tuples N`` keeps the user's own spouts (which must then be deterministic, e.g.
seeded) and stops each spout task after ``N`` calls of ``next_tuple`` that emitted.

Both engines rebuild the topology from a project on disk (the ``heron`` engine's
instances import it in their own processes), so the replacement is a small generated
project (:func:`wrap_project`): its topology file imports the user's topology and
rebuilds it with :func:`wrap_topology`; its ``src`` and configuration are links to the
user's, so imports, ``-e ENV`` options and shell components resolve as before.

The fixture is JSON lines, one tuple per line::

    {"values": ["the cow jumped"]}
    {"spout": "sentences", "stream": "default", "values": ["over the moon"]}

``spout`` is needed when the topology has several spouts (rows name the spout they
stand in for); ``stream`` defaults to ``default``. Values are JSON, so a tuple arrives
as a list, as it would after the engines' serializer anyway.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.wrapping import load_original_topology, write_wrapper_project

__all__ = ["FixtureError", "FixtureRow", "read_fixture", "wrap_project", "wrap_topology"]

log = logging.getLogger("heron.conformance")

#: how often a failed fixture tuple is replayed before it is dropped (ReliableSpout's)
MAX_REPLAYS = 3


class FixtureError(ValueError):
    """A fixture file or its fit to the topology is wrong (names file and line)."""


@dataclass(frozen=True)
class FixtureRow:
    values: list[Any]
    stream: str = "default"
    spout: str | None = None
    #: where the row is (``file:line``), for errors and tuple ids
    line: int = 0


def read_fixture(path: Path) -> list[FixtureRow]:
    """The rows of a fixture file; a malformed line raises naming ``path:line``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FixtureError(f"{path}: cannot read the fixture: {exc.strerror}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise FixtureError(f"{path}:{number}: not JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("values"), list):
            raise FixtureError(f"{path}:{number}: a fixture row is an object with a "
                               '"values" list, e.g. {"values": ["word"]}')
        unknown = set(data) - {"values", "stream", "spout"}
        if unknown:
            raise FixtureError(f"{path}:{number}: unknown key(s) {', '.join(sorted(unknown))}; "
                               "a row has values, and optionally stream and spout")
        stream, spout = data.get("stream", "default"), data.get("spout")
        if not isinstance(stream, str) or (spout is not None and not isinstance(spout, str)):
            raise FixtureError(f"{path}:{number}: stream and spout are names (strings)")
        rows.append(FixtureRow(data["values"], stream, spout, number))
    return rows


def assign_rows(rows: list[FixtureRow], spouts: dict[str, dict[str, tuple[list[str], bool]]],
                path: Path) -> dict[str, list[FixtureRow]]:
    """Rows per spout, checked against the spouts' declared streams.

    ``spouts``: spout name -> stream -> (fields, direct)."""
    names = sorted(spouts)
    out: dict[str, list[FixtureRow]] = {name: [] for name in names}
    for row in rows:
        spout = row.spout
        if spout is None:
            if len(names) > 1:
                raise FixtureError(f"{path}:{row.line}: the topology has several spouts "
                                   f"({', '.join(names)}); say which one this row is for "
                                   'with "spout"')
            spout = names[0]
        if spout not in spouts:
            raise FixtureError(f"{path}:{row.line}: no spout {spout!r} in the topology; "
                               f"spouts: {', '.join(names)}")
        streams = spouts[spout]
        if row.stream not in streams:
            raise FixtureError(f"{path}:{row.line}: spout {spout!r} declares no stream "
                               f"{row.stream!r}; it declares {', '.join(sorted(streams))}")
        fields, direct = streams[row.stream]
        if direct:
            raise FixtureError(f"{path}:{row.line}: stream {spout}/{row.stream} is direct; "
                               "the fixture spout cannot choose tasks (use --max-tuples with "
                               "the topology's own spouts)")
        if len(row.values) != len(fields):
            raise FixtureError(f"{path}:{row.line}: {len(row.values)} value(s) for "
                               f"{spout}/{row.stream}, which declares {len(fields)} field(s) "
                               f"{fields}")
        out[spout].append(row)
    return out


class FixtureSpoutMixin:
    """Put before a spout class: its rows instead of its ``next_tuple``.

    Rows are split between the spout's tasks by position. Each is emitted with a tuple
    id, so under at-least-once it is tracked, and replayed on fail (up to
    ``MAX_REPLAYS`` times, as ReliableSpout does); the user's ``initialize``, ``ack``
    and ``fail`` are not called (they may need the real source)."""

    fixture_rows: list[FixtureRow] = []

    def initialize(self, stormconf: dict, context: dict) -> None:
        # a mixin: the user's spout class after it in the bases has these (set at setup)
        name = self.component_name  # type: ignore[attr-defined]
        tasks = sorted(int(t) for t, c in context["task->component"].items() if c == name)
        index = tasks.index(self.task_id)  # type: ignore[attr-defined]  # (the same)
        self._rows = self.fixture_rows[index::len(tasks)]
        self._position = 0
        self._pending: dict[str, FixtureRow] = {}
        self._replays: dict[str, int] = {}

    def _emit_row(self, row: FixtureRow) -> None:
        tup_id = f"fixture:{row.line}"
        self._pending[tup_id] = row
        # a mixin: the user's spout class after it in the bases defines emit
        self.emit(list(row.values), tup_id=tup_id, stream=row.stream)  # type: ignore[attr-defined]

    def next_tuple(self) -> None:
        if self._position < len(self._rows):
            row = self._rows[self._position]
            self._position += 1
            self._emit_row(row)

    def ack(self, tup_id: Any) -> None:
        self._pending.pop(tup_id, None)
        self._replays.pop(tup_id, None)

    def fail(self, tup_id: Any) -> None:
        row = self._pending.get(tup_id)
        if row is None:
            return
        if self._replays.get(tup_id, 0) >= MAX_REPLAYS:
            self.ack(tup_id)
            return
        self._replays[tup_id] = self._replays.get(tup_id, 0) + 1
        self._emit_row(row)

    def is_exhausted(self) -> bool:
        return self._position >= len(self._rows)


class BoundedSpoutMixin:
    """Put before a deterministic spout class: at most ``max_tuples`` calls of its
    ``next_tuple`` that emit (per task), then it reports exhaustion."""

    max_tuples = 0

    def initialize(self, stormconf: dict, context: dict) -> None:
        self._bounded_calls = 0
        self._bounded_emits = 0
        # a mixin: the user's spout class after it in the bases defines these
        super().initialize(stormconf, context)  # type: ignore[misc]

    def next_tuple(self) -> None:
        if self._bounded_calls >= self.max_tuples:
            return
        before = self._bounded_emits
        # a mixin: the user's spout class after it in the bases defines these
        super().next_tuple()  # type: ignore[misc]
        if self._bounded_emits != before:
            self._bounded_calls += 1

    def emit(self, *args: Any, **kwargs: Any) -> Any:
        self._bounded_emits = getattr(self, "_bounded_emits", 0) + 1
        # (the user's spout class's emit)
        return super().emit(*args, **kwargs)  # type: ignore[misc]

    def is_exhausted(self) -> bool:
        if self._bounded_calls >= self.max_tuples:
            return True
        check = getattr(super(), "is_exhausted", None)
        return bool(check()) if check is not None else False


def _spout_streams(spec: Any) -> dict[str, tuple[list[str], bool]]:
    return {name: (list(info.output_fields), bool(info.direct))
            for name, info in spec.outputs.items()}


def _is_spout_spec(spec: Any, topology_cls: Any) -> bool:
    if type(spec).__name__.endswith("SpoutSpec"):
        return True
    return spec.name in (getattr(topology_cls, "thrift_spouts", None) or {})


def wrap_topology(topology_file: str | Path, *, fixture: str | Path | None = None,
                  max_tuples: int | None = None, module: str = __name__) -> type:
    """The user's topology class rebuilt with fixture (or bounded) spouts.

    The new class has the user's components, names, groupings and config; only the
    spout specs differ: a fixture spout per spout (``fixture``) or the user's spout
    bounded to ``max_tuples`` (``max_tuples``). The classes are made with the user's
    own DSL (streamparse's or ``compat.storm_api``'s), so the planner reads them as any
    topology."""
    if (fixture is None) == (max_tuples is None):
        raise ValueError("wrap_topology needs exactly one of fixture= and max_tuples=")
    # the user's Topology class: compat.storm_api's or streamparse's
    topology_cls: Any = _load_user_topology(Path(topology_file))
    spouts = [s for s in topology_cls.specs if _is_spout_spec(s, topology_cls)]
    spout_ids = {id(s) for s in spouts}
    by_spout: dict[str, list[FixtureRow]] = {}
    if fixture is not None:
        by_spout = assign_rows(read_fixture(Path(fixture)),
                               {s.name: _spout_streams(s) for s in spouts}, Path(fixture))
    body: dict[str, Any] = {"__module__": module, "config": dict(topology_cls.config or {})}
    for spec in topology_cls.specs:
        if id(spec) not in spout_ids:
            body[spec.name] = spec
            continue
        user_cls = spec.component_cls
        if not hasattr(user_cls, "next_tuple"):
            raise FixtureError(f"spout {spec.name!r} is not a Python spout ({user_cls!r}); "
                               "only Python spouts can be replaced or bounded")
        cls: Any  # a subclass of the user's spout class: its DSL's spec()
        if fixture is not None:
            cls = type(f"Fixture_{spec.name}", (FixtureSpoutMixin, user_cls),
                       {"__module__": module, "fixture_rows": by_spout[spec.name]})
        else:
            cls = type(f"Bounded_{spec.name}", (BoundedSpoutMixin, user_cls),
                       {"__module__": module, "max_tuples": int(max_tuples or 0)})
        par = spec.par if fixture is None else 1
        body[spec.name] = cls.spec(name=spec.name, par=par, config=json.loads(spec.config))
    bases = topology_cls.__bases__
    return type(topology_cls)(f"{topology_cls.__name__}Conformance", bases, body)


def _load_user_topology(path: Path) -> type:
    return load_original_topology(path, "_conformance_original_", FixtureError)


_TOPOLOGY_TEMPLATE = '''"""Generated by heron-conformance: {what}.

The original topology is {topology_file}; delete this directory freely.
"""

from conformance.fixture_spout import wrap_topology

{class_name} = wrap_topology({topology_file!r}, fixture={fixture!r}, max_tuples={max_tuples!r},
                             module=__name__)
'''


def wrap_project(project: Path, topology_file: Path, out: Path, *,
                 fixture: Path | None = None, max_tuples: int | None = None) -> Path:
    """Write the generated project into ``out`` (created); returns its directory.

    The topology keeps its name (the file stem); ``src`` and ``config.json`` /
    ``heron.yaml`` are symbolic links to the user's."""
    if (fixture is None) == (max_tuples is None):
        raise ValueError("wrap_project needs exactly one of fixture= and max_tuples=")
    project, topology_file = Path(project).resolve(), Path(topology_file).resolve()
    if fixture is not None:
        fixture = Path(fixture).resolve()
        read_fixture(fixture)  # fail here, with file:line, not in an engine's process
    what = (f"its spouts replaced by the fixture {fixture}" if fixture is not None
            else f"its spouts bounded to {max_tuples} emitting next_tuple calls per task")
    text = _TOPOLOGY_TEMPLATE.format(
        what=what, topology_file=str(topology_file),
        fixture=str(fixture) if fixture is not None else None, max_tuples=max_tuples,
        class_name="ConformanceTopology")
    return write_wrapper_project(project, topology_file, out, text)
