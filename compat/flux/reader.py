"""``read_flux``: a Flux file, substituted, parsed, merged with its includes, mapped and
checked, as a :class:`~.model.FluxTopology`. Nothing runs and nothing is imported
here: every error a Flux file can have is found before a process starts."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from .components import Beans, map_vertex, refuse_class
from .errors import FluxError, Where
from .includes import include_path, merge_include
from .model import FluxComponent, FluxStream, StreamDef, TopologyDef
from .parser import load_yaml
from .paths import shell_dir_of
from .properties import read_properties
from .schema import read_definitions
from .substitution import Substituted, substitute
from .topology import FluxTopology

__all__ = ["read_flux"]

log = logging.getLogger("heron.flux")


def read_flux(path: Path | str, *, filter_file: Path | str | None = None,
              env_filter: bool = False, environ: Mapping[str, str] | None = None,
              values: Mapping[str, str] | None = None,
              cwd: Path | str | None = None) -> FluxTopology:
    """Read the Flux topology at ``path``; raise FluxError (``FILE:LINE: ...``).

    ``filter_file`` is ``--filter`` (Java properties), ``env_filter`` allows
    ``${ENV-NAME}`` from ``environ`` (default ``os.environ``). ``values``, the
    ``values`` of an earlier read, replaces both: a process rebuilding a submitted
    topology gets exactly the submitter's text. ``cwd`` is the directory relative
    include paths are tried against first (default: this process's).
    """
    shown = str(path)
    path = Path(path)
    if not path.is_file():
        raise FluxError(Where(shown, 1) if path.exists() else shown,
                        "no such Flux file" if not path.exists() else "not a file")
    properties = read_properties(filter_file) if filter_file is not None else {}
    environment = os.environ if environ is None else environ
    base = Path(cwd) if cwd is not None else Path.cwd()
    warnings: list[str] = []
    used: dict[str, str] = {}

    def parse(file: Path, name: str) -> TopologyDef:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise FluxError(name, f"cannot read the Flux file: {exc}") from None
        done: Substituted = substitute(text, name, properties=properties, env_filter=env_filter,
                                       environ=environment, recorded=values)
        used.update(done.values)
        warnings.extend(done.warnings)
        return read_definitions(load_yaml(done.text, name), warnings)

    topology = parse(path, shown)
    for include in topology.includes:
        file = include_path(include, path.resolve().parent, base)
        merge_include(topology, parse(file, str(file)), include, warnings.append)
    flux = _map(topology, path, shown)
    flux.values, flux.cwd, flux.warnings = used, base.resolve(), warnings
    return flux


def _map(topology: TopologyDef, path: Path, shown: str) -> FluxTopology:
    if not topology.spouts:
        raise FluxError(Where(shown, 1), "the topology has no spouts (a 'spouts' list with "
                                         "at least one entry)")
    for bolt_id, bolt in topology.bolts.items():
        if bolt_id in topology.spouts:
            raise FluxError(bolt.where, f"bolt id {bolt_id!r} is also a spout's id "
                                        f"({topology.spouts[bolt_id].where}); ids must be unique")
    beans = Beans(topology.components)
    beans.build_all()
    spouts = [map_vertex(beans, v) for v in topology.spouts.values()]
    bolts = [map_vertex(beans, v) for v in topology.bolts.values()]
    streams = _streams(topology, {c.id: c for c in [*spouts, *bolts]})
    fed = {s.target for s in streams}
    for mapped in bolts:
        if mapped.id not in fed:
            raise FluxError(Where(mapped.file, mapped.line),
                            f"bolt {mapped.id!r} has no input: add a stream with to: {mapped.id}")
    name = topology.name or path.stem
    return FluxTopology(name=name, config=dict(topology.config), spouts=spouts, bolts=bolts,
                        streams=streams, path=path.resolve(), shell_dir=shell_dir_of(path))


def _streams(topology: TopologyDef, components: dict[str, FluxComponent]) -> list[FluxStream]:
    out = []
    for stream in topology.streams:
        source = components.get(stream.source)
        label = _label(stream)
        if source is None:
            raise FluxError(stream.from_where, f"{label}: from {stream.source!r}: no spout or "
                                               f"bolt has that id ({_ids(topology)})")
        target = components.get(stream.target)
        if target is None or target.role != "bolt":
            problem = ("is a spout; streams go to bolts" if target is not None
                       else f"no bolt has that id ({_ids(topology)})")
            raise FluxError(stream.to_where, f"{label}: to {stream.target!r}: {problem}")
        grouping = stream.grouping
        if grouping.type == "CUSTOM":
            raise refuse_class(grouping.where, f"{label}: CUSTOM grouping",
                               grouping.custom_class or "(no customClass)")
        if grouping.type == "FIELDS" and not grouping.args:
            raise FluxError(grouping.where, f"{label}: a FIELDS grouping needs args: "
                                            "[field, ...]")
        if source.kind != "python":  # a Python class's outputs are checked when it loads
            fields = source.outputs.get(grouping.stream_id)
            if fields is None:
                declared = ", ".join(source.outputs) or "none"
                raise FluxError(grouping.where, f"{label}: {stream.source!r} declares no "
                                                f"stream {grouping.stream_id!r} (its streams: "
                                                f"{declared})")
            missing = [f for f in grouping.args or [] if f not in fields]
            if grouping.type == "FIELDS" and missing:
                raise FluxError(grouping.where, f"{label}: field(s) {', '.join(missing)} are "
                                                f"not output fields of {stream.source!r} stream "
                                                f"{grouping.stream_id!r} ({', '.join(fields)})")
        out.append(FluxStream(source=stream.source, target=stream.target,
                              grouping=grouping.type, stream_id=grouping.stream_id,
                              fields=(list(grouping.args or []) if grouping.type == "FIELDS"
                                      else None),
                              line=stream.where.line, file=stream.where.file, name=stream.name))
    return out


def _label(stream: StreamDef) -> str:
    return (
        f"stream {stream.name!r}" if stream.name else f"stream {stream.source} -> {stream.target}"
    )


def _ids(topology: TopologyDef) -> str:
    return (f"spouts: {', '.join(topology.spouts) or 'none'}; "
            f"bolts: {', '.join(topology.bolts) or 'none'}")
