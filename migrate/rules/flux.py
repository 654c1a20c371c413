"""Rule ``flux``: each Storm Flux file becomes a streamparse topology ``topologies/<name>.py``.

A Flux file (``*.yaml``/``*.yml`` whose top level has ``name`` and ``spouts`` or
``bolts``, or a YAML file given as PATH) is read with the engine's own Flux reader
(``compat.flux.read_flux``: substitution, includes, components, checks), so the migrator
and ``heron run FILE.yaml`` cannot disagree about what a file means. The topology it
describes is written as Python on this project's API: Flux's shell wrappers become
``ShellSpout``/``ShellBolt`` specs (command line split as the engine splits it), Storm's
KafkaSpout/KafkaBolt the native connectors' specs with their ``heron.connectors.kafka.*``
settings in the component config, ``module:Class`` components that class's spec, and
each stream a ``Grouping`` in the bolt's ``inputs``.

The YAML is left as it is: the engine runs it directly (``heron run FILE.yaml``), and a
person may prefer that. What the reader refuses (Java classes other than the Kafka and
shell ones, CUSTOM groupings, ``topologySource``, dangling refs...) is an ERROR at the
file and line it names, and nothing is written for that file; so is a ``${...}`` left
without a value (``--filter FILE.properties`` supplies them; the values are written into
the Python file, as Flux bakes them into the topology it submits). A file that is not
valid YAML fails like an unparseable Python file. An existing ``topologies/<name>.py`` is
never overwritten, which keeps the rule idempotent.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml

from migrate.files import iter_project_files
from migrate.findings import Finding, Level
from migrate.outcome import FileOutcome, Status

if TYPE_CHECKING:  # types only: the Flux reader loads when a Flux file is migrated
    from compat.flux.model import FluxComponent
    from compat.flux.topology import FluxTopology

FLUX_SUFFIXES = (".yaml", ".yml")
_TOP_NAME = re.compile(r"^name\s*:", re.MULTILINE)
_TOP_VERTICES = re.compile(r"^(spouts|bolts)\s*:", re.MULTILINE)
_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<text>.*)$", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")
_SAFE_STEM = re.compile(r"[A-Za-z0-9_-]+")
_GROUPINGS = {"SHUFFLE": "Grouping.SHUFFLE", "ALL": "Grouping.ALL", "GLOBAL": "Grouping.GLOBAL",
              "NONE": "Grouping.NONE", "DIRECT": "Grouping.DIRECT",
              "LOCAL_OR_SHUFFLE": "Grouping.LOCAL_OR_SHUFFLE"}
# Names a Topology class body already means something by, or Python reserves.
_RESERVED = frozenset({"config", "specs", "thrift_topology", "name"})
STORM_API = "compat.storm_api"


def looks_like_flux(path: Path) -> bool:
    """A YAML file whose top level has ``name`` and ``spouts`` or ``bolts``.

    Read as text, not parsed: a Flux file that is not valid YAML must still be found, so
    it is reported rather than silently skipped.
    """
    if path.suffix.lower() not in FLUX_SUFFIXES or not path.is_file() or path.is_symlink():
        return False
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return bool(_TOP_NAME.search(text) and _TOP_VERTICES.search(text))


def flux_files(root: Path) -> list[Path]:
    """The Flux files to convert: ``root`` itself when it is a YAML file, else every
    Flux file under it (the walker every rule shares, so noise folders are skipped)."""
    if not root.is_dir():
        return [root] if root.suffix.lower() in FLUX_SUFFIXES else []
    return [p for p in iter_project_files(root) if looks_like_flux(p)]


def topology_stem(name: str) -> str:
    """The topology file's stem: the Flux name itself when it is a safe file name (the
    file's stem is the topology's name, so ``heron kill NAME`` keeps working), else the
    name with every other character replaced by ``_``."""
    if _SAFE_STEM.fullmatch(name):
        return name
    return re.sub(r"[^A-Za-z0-9_-]", "_", name).strip("_") or "flux_topology"


def _identifier(text: str, taken: set[str]) -> str:
    """A class-body attribute name for a component id, unique among ``taken``."""
    base = re.sub(r"\W", "_", text)
    if not base or base[0].isdigit():
        base = "c_" + base
    if keyword.iskeyword(base) or base in _RESERVED or base.startswith("__"):
        base += "_"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _class_name(name: str) -> str:
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    text = "".join(w[:1].upper() + w[1:] for w in words) or "Flux"
    return text if text[0].isalpha() else "Flux" + text


def literal(value: Any, indent: str = "") -> str:
    """Python source for a YAML value (text, numbers, booleans, None, lists, maps); a map
    of more than one entry is laid out one entry per line, indented from ``indent``."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(v, indent) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        if len(value) == 1:
            [(k, v)] = value.items()
            return "{" + f"{literal(str(k))}: {literal(v, indent)}" + "}"
        inner = indent + "    "
        rows = [f"{inner}{literal(str(k))}: {literal(v, inner)}," for k, v in value.items()]
        return "{\n" + "\n".join(rows) + f"\n{indent}}}"
    raise TypeError(f"no Python literal for {value!r}")


@dataclass
class Generated:
    """A topology file's text and what had to be said about it."""

    text: str
    findings: list[Finding] = field(default_factory=list)


class FluxRule:
    """Write ``topologies/<name>.py`` for each Flux file; the YAML stays as it is."""

    RULE_ID: ClassVar[str] = "flux"
    DESCRIPTION: ClassVar[str] = ("Flux YAML files become topologies/<name>.py (shell, Kafka and "
                                  "Python components, groupings); the YAML is kept.")
    #: CLI options this rule takes (``migrate_tree`` passes them by name)
    OPTIONS: ClassVar[tuple[str, ...]] = ("filter_file",)

    def __init__(self, filter_file: Path | None = None) -> None:
        self.filter_file = filter_file

    def apply(self, root: Path) -> list[FileOutcome]:
        """One outcome per Flux file (findings, or the failure), plus one per topology
        file created."""
        base = root if root.is_dir() else root.parent
        outcomes: list[FileOutcome] = []
        written: dict[Path, str] = {}
        for path in flux_files(root):
            outcomes.extend(self._convert(path, base, written))
        return outcomes

    def _convert(self, path: Path, base: Path, written: dict[Path, str]) -> list[FileOutcome]:
        display = str(path.relative_to(base))
        try:
            from compat.flux import FluxError, read_flux
        except ImportError as exc:  # the reader is part of this project; say if it is missing
            return [FileOutcome(path, Status.FAILED,
                                error=f"{display}: the Flux reader cannot be imported: {exc}")]
        try:
            flux = read_flux(path.resolve(), filter_file=self.filter_file, cwd=base)
        except FluxError as exc:
            return [self._refused(path, display, str(exc), exc.problem)]
        except OSError as exc:
            return [FileOutcome(path, Status.FAILED, error=f"{display}: cannot read: {exc}")]
        shown = str(path.resolve())
        notes = [self._warning(display, shown, w) for w in flux.warnings]
        placeholders = [f for f in notes if f.level is Level.ERROR]
        target = base / "topologies" / f"{topology_stem(flux.name)}.py"
        target_display = str(target.relative_to(base))
        if placeholders:
            notes.append(
                self._finding(
                    display,
                    0,
                    Level.ERROR,
                    f"{target_display} not written: the Flux file has placeholders without a value",
                    manual=self._filter_todo(display),
                )
            )
            return [FileOutcome(path, Status.UNCHANGED, findings=notes)]
        generated = render(flux, display, base, target_display, self.filter_file)
        findings = [*notes, *generated.findings]
        if any(f.level is Level.ERROR for f in generated.findings):
            return [FileOutcome(path, Status.UNCHANGED, findings=findings)]  # nothing written
        runs_directly = self._finding(
            display, 0, Level.INFO,
            f"Flux file kept as it is (the engine runs it directly: heron run {display}"
            f"{' --filter FILE.properties' if flux.values else ''}); {target_display} is the "
            "same topology in Python", new=target_display)
        if target in written:
            findings.append(self._finding(
                display, 0, Level.WARNING,
                f"{target_display} not written: {written[target]} has the same topology name "
                f"{flux.name!r}", manual="rename one of the topologies (its `name:`) and run "
                "heron-migrate again"))
            return [FileOutcome(path, Status.UNCHANGED, findings=findings)]
        written[target] = display
        if target.exists() or target.is_symlink():
            same = target.is_file() and _read(target) == generated.text
            if not same:
                findings.append(self._finding(
                    display, 0, Level.WARNING,
                    f"{target_display} exists and is not what {display} gives now; not "
                    "overwritten", manual=f"compare them, or delete {target_display} and run "
                    "heron-migrate again to regenerate it"))
            # the same text (a second run): what the file needs is still true, so its
            # findings are said again, but nothing is written
            return [FileOutcome(path, Status.UNCHANGED, findings=[runs_directly, *findings])]
        return [FileOutcome(path, Status.UNCHANGED, findings=[runs_directly]),
                FileOutcome(target, Status.CHANGED, "", generated.text, findings,
                            created=True, source=path)]

    def _refused(self, path: Path, display: str, message: str, problem: str) -> FileOutcome:
        """A FluxError: invalid YAML fails the file (as an unparseable Python file does);
        anything else the reader refuses is an ERROR a person must act on."""
        located = self._relocate(message, str(path.resolve()), display)
        if problem.startswith(("invalid YAML", "the file is empty",
                               "the top level must be")):
            return FileOutcome(path, Status.FAILED,
                               error=f"{located}; nothing written, the file left as it is")
        match = _LOCATED.match(located)
        file, line, text = ((match["file"], int(match["line"]), match["text"]) if match
                            else (display, 0, located))
        manual = ("port what it names to a Python or shell component (or the Kafka "
                  "connectors) in the YAML, then run heron-migrate again; nothing was "
                  "written for this file")
        if "${" in problem:  # a placeholder left as it was made the value invalid
            manual = self._filter_todo(display)
        first = Finding(path=file, line=line, col=1 if line else 0, level=Level.ERROR,
                        rule_id=self.RULE_ID, message=f"Flux topology not converted: {text}",
                        manual=manual)
        others = [f for f in self._other_refusals(path, display, problem) if f.line != line]
        return FileOutcome(path, Status.UNCHANGED, findings=[first, *others])

    def _other_refusals(self, path: Path, display: str, first: str) -> list[Finding]:
        """Everything else in the file the reader would refuse, one ERROR each.

        The reader stops at the first problem; a person porting a topology wants the
        whole list at once. So the file's YAML nodes (PyYAML's composer: positions, no
        Flux semantics) are walked for what cannot be carried: Java classes with no
        mapping, CUSTOM groupings, ``topologySource``/``workerHooks``, and placeholders
        the ``--filter`` file has no value for. Includes are not followed; a file that
        does not compose gives nothing more. What ``first`` (the reader's message)
        already names is not said twice.
        """
        from compat.flux import read_properties
        from compat.flux.components import SHELL_BOLT, SHELL_SPOUT
        from compat.flux.kafka import KAFKA_BEANS, KAFKA_VERTICES

        known = {SHELL_BOLT, SHELL_SPOUT, *KAFKA_BEANS, *KAFKA_VERTICES}
        try:
            text = path.read_text(encoding="utf-8")
            root = yaml.compose(text, Loader=yaml.SafeLoader)
            properties = (read_properties(self.filter_file) if self.filter_file is not None
                          else {})
        except (OSError, UnicodeDecodeError, yaml.YAMLError, ValueError):
            return []
        found: list[Finding] = []

        def refuse(node: yaml.Node, message: str, manual: str) -> None:
            line = node.start_mark.line + 1
            found.append(Finding(path=display, line=line, col=node.start_mark.column + 1,
                                 level=Level.ERROR, rule_id=self.RULE_ID, message=message,
                                 manual=manual))

        port = ("port it to a Python or shell component (or the Kafka connectors) in the "
                "YAML, then run heron-migrate again")
        if isinstance(root, yaml.MappingNode):
            for key, _value in root.value:
                if key.value in ("topologySource", "workerHooks"):
                    refuse(key, f"{key.value} names Java code that cannot run here",
                           "declare spouts, bolts and streams in the YAML instead"
                           if key.value == "topologySource" else "remove the worker hooks")
        for parent, key, value in _pairs(root):
            if key.value == "className" and isinstance(value, yaml.ScalarNode):
                name = value.value
                if parent == "customClass" or name in first:
                    continue  # said with its CUSTOM grouping, or by the reader
                if name not in known and ":" not in name and "${" not in name:
                    refuse(value, f"Java class {name} has no equivalent here", port)
            elif (key.value == "type" and isinstance(value, yaml.ScalarNode)
                  and value.value == "CUSTOM" and "CUSTOM" not in first):
                refuse(value, "CUSTOM grouping (a Java class) has no equivalent here",
                       "use another grouping type in the YAML, or port the grouping to a "
                       "Python CustomGrouping in the migrated topology by hand")
        for number, line_text in enumerate(text.split("\n"), start=1):
            if line_text.lstrip().startswith("#"):
                continue
            for match in _PLACEHOLDER.finditer(line_text):
                body = match.group(1)
                if body.split("[")[0] not in properties and match.group(0) not in first:
                    found.append(Finding(
                        path=display, line=number, col=match.start() + 1, level=Level.ERROR,
                        rule_id=self.RULE_ID, message=f"no value for ${{{body}}}",
                        manual=self._filter_todo(display)))
        return found

    def _warning(self, display: str, shown: str, warning: str) -> Finding:
        """A reader warning as a finding at its line; a placeholder left without a value
        is an ERROR (its text would end up in the Python file)."""
        located = self._relocate(warning, shown, display)
        match = _LOCATED.match(located)
        file, line, text = ((match["file"], int(match["line"]), match["text"]) if match
                            else (display, 0, located))
        if "${" in text and "no value" in text:
            return Finding(path=file, line=line, col=1 if line else 0, level=Level.ERROR,
                           rule_id=self.RULE_ID, message=f"unresolved placeholder: {text}",
                           manual=self._filter_todo(display))
        return Finding(path=file, line=line, col=1 if line else 0, level=Level.WARNING,
                       rule_id=self.RULE_ID, message=text)

    @staticmethod
    def _filter_todo(display: str) -> str:
        return ("run heron-migrate again with --filter FILE.properties (the file you give "
                "storm jar --filter); ${ENV-...} values are not baked into source: read "
                f"them with os.environ in the topology file, or run {display} directly with "
                "heron run --env-filter")

    @staticmethod
    def _relocate(message: str, shown: str, display: str) -> str:
        """The reader names files as it was given them (absolute): show them relative."""
        return message.replace(shown, display)

    def _finding(self, path: str, line: int, level: Level, message: str, *, new: str = "",
                 manual: str = "") -> Finding:
        return Finding(path=path, line=line, col=1 if line else 0, level=level,
                       rule_id=self.RULE_ID, message=message, new=new, manual=manual)


def _pairs(node: yaml.Node | None, parent: str = ""
           ) -> Iterator[tuple[str, yaml.ScalarNode, yaml.Node]]:
    """Every (key of the enclosing mapping, scalar key, value) of every mapping under
    ``node``, in file order."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                yield parent, key, value
                yield from _pairs(value, key.value)
            else:
                yield from _pairs(value, parent)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _pairs(item, parent)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def render(flux: FluxTopology, display: str, base: Path, target_display: str,
           filter_file: Path | None) -> Generated:
    """The Python topology file for a read FluxTopology, and its findings."""
    from compat.flux.builder import shell_command  # the engine's own split of a command

    findings: list[Finding] = []

    def note(line: int, level: Level, message: str, manual: str = "") -> None:
        findings.append(Finding(path=display, line=line, col=1 if line else 0, level=level,
                                rule_id=FluxRule.RULE_ID, message=message, manual=manual))

    taken: set[str] = set()
    attrs = {c.id: _identifier(c.id, taken) for c in flux.components}
    inputs: dict[str, list[str]] = {b.id: [] for b in flux.bolts}
    direct: set[tuple[str, str]] = set()
    for stream in flux.streams:
        source = attrs[stream.source]
        key = source if stream.stream_id == "default" else f"{source}[{literal(stream.stream_id)}]"
        if stream.grouping == "FIELDS":
            grouping = "Grouping.fields(" + ", ".join(literal(f) for f in stream.fields or []) + ")"
        else:
            grouping = _GROUPINGS[stream.grouping]
        if stream.grouping == "DIRECT":
            direct.add((stream.source, stream.stream_id))
        inputs[stream.target].append(f"{key}: {grouping}")
    order = _definition_order(flux)
    if order is None:
        note(0, Level.ERROR, f"{target_display} not written: the streams form a cycle, and a "
             "Topology class defines each bolt after its inputs",
             f"break the cycle in the YAML, or keep running {display} itself")
        return Generated("", findings)
    imports: dict[str, set[str]] = {STORM_API: {"Topology"}}
    body: list[str] = []
    shell_dirs = False
    for component in order:
        lines, uses = _spec_lines(component, attrs[component.id], inputs.get(component.id),
                                  direct, shell_command)
        for module, name in uses:
            imports.setdefault(module, set()).add(name)
        body.extend(["", *lines])
        shell_dirs = shell_dirs or component.kind == "shell"
        if component.kind == "python":
            _check_python_module(component, base, note)
    if inputs and any(inputs.values()):
        imports[STORM_API].add("Grouping")
    if shell_dirs and flux.shell_dir.resolve() != (base / "src").resolve():
        relative = _relative(flux.shell_dir, base)
        here = f"{relative}/" if relative != "." else "the project's top folder"
        note(0, Level.WARNING,
             f"Flux starts the shell components in {here}; the engine starts a project's "
             f"shell components in src/", f"copy the scripts they run from {here} to src/ "
             f"(or keep running {display} itself, which uses {here})")
    class_name = _class_name(flux.name)
    how = (f" --filter {_relative(filter_file, base)}"
           if flux.values and filter_file is not None else "")
    header = [
        '"""' + f"Topology {flux.name}: written by heron-migrate from the Flux file {display}.",
        "",
        "The YAML is kept and runs as it is too:",
        "",
        f"    heron run {display}{how}",
        "",
        "This file is the same topology in Python" + (
            ", with the --filter values it was read with." if flux.values else ".") + '\n"""',
        "",
    ]
    import_lines = [
        f"from {m} import {', '.join(sorted(names))}"
        for m, names in sorted(imports.items(), key=lambda i: (i[0] == STORM_API, i[0]))
    ]
    lines = [*header, *import_lines, "", "", f"class {class_name}(Topology):"]
    if flux.config:
        lines.append(f"    config = {literal(flux.config, '    ')}")
    lines.extend(body)
    if flux.name != topology_stem(flux.name):
        note(0, Level.WARNING, f"the topology's name {flux.name!r} is not a file name; "
             f"{target_display} names it {topology_stem(flux.name)!r}",
             "use the new name with heron kill/list, or rename the file")
    return Generated("\n".join(lines) + "\n", findings)


def _definition_order(flux: FluxTopology) -> list[FluxComponent] | None:
    """Components in an order where every bolt comes after its inputs (spouts first,
    then file order where possible); None when the streams form a cycle."""
    sources: dict[str, set[str]] = {b.id: set() for b in flux.bolts}
    for stream in flux.streams:
        sources[stream.target].add(stream.source)
    done: list[FluxComponent] = list(flux.spouts)
    placed = {c.id for c in done}
    pending = list(flux.bolts)
    while pending:
        ready = [b for b in pending if sources[b.id] <= placed]
        if not ready:
            return None
        for bolt in ready:
            done.append(bolt)
            placed.add(bolt.id)
        pending = [b for b in pending if b.id not in placed]
    return done


def _spec_lines(component: FluxComponent, attr: str, inputs: list[str] | None,
                direct: set[tuple[str, str]],
                shell_command: Callable[[list[str]], tuple[str, str]]
                ) -> tuple[list[str], list[tuple[str, str]]]:
    """The class-body lines declaring one component, and the ``(module, name)`` it uses."""
    args: list[str] = [f"name={literal(component.id)}"]
    uses: list[tuple[str, str]] = []
    config = dict(component.config)
    if component.kind == "shell":
        cls = "ShellSpout" if component.role == "spout" else "ShellBolt"
        uses.append((STORM_API, cls))
        command, script = shell_command(component.command or [])
        args += [f"command={literal(command)}", f"script={literal(script)}"]
    else:
        module, _, cls = (component.class_path or "").partition(":")
        uses.append((module, cls))
        if component.kind in ("kafka_spout", "kafka_sink"):
            config = {**component.settings, **config}
    if component.role == "bolt":
        args.append("inputs={" + ", ".join(inputs or []) + "}")
    args.append(f"par={component.parallelism}")
    if config:
        args.append(f"config={literal(config, '        ')}")
    if component.kind == "shell" and component.outputs:
        plain = list(component.outputs) == ["default"] and (component.id, "default") not in direct
        if plain:
            args.append(f"outputs={literal(component.outputs['default'])}")
        else:
            uses.append((STORM_API, "Stream"))
            streams = []
            for stream, fields in component.outputs.items():
                flag = ", direct=True" if (component.id, stream) in direct else ""
                streams.append(f"Stream(fields={literal(fields)}, name={literal(stream)}{flag})")
            args.append("outputs=[" + streams[0] + "]" if len(streams) == 1 else
                        "outputs=[\n" + "".join(f"            {s},\n" for s in streams)
                        + "        ]")
    lines = [f"    {attr} = {cls}.spec("]
    lines += [f"        {arg}," for arg in args]
    lines.append("    )")
    return lines, uses


def _check_python_module(component: FluxComponent, base: Path,
                         note: Callable[[int, Level, str, str], None]) -> None:
    """A ``module:Class`` component is imported from the project's ``src/`` by the
    topology file: say so when its module is not there."""
    module = (component.class_path or "").partition(":")[0]
    relative = Path(*module.split("."))
    src = base / "src"
    if not (
        (src / relative).with_suffix(".py").is_file() or (src / relative / "__init__.py").is_file()
    ):
        note(component.line, Level.WARNING,
             f"{component.role} {component.id!r}: module {module} is not under src/, where "
             "the topology file imports it from", f"move {module} to src/")


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)
