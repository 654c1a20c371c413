"""Rule ``dependencies``: ``virtualenvs/*.txt`` become requirements files; ``project.clj``
JVM dependencies are reported.

``sparse`` built a virtualenv per topology on every Storm worker from
``virtualenvs/NAME.txt``; here the project's environment is installed like any Python
project, so each spec becomes ``requirements.txt`` (one spec) or ``requirements-NAME.txt``
(several), with streamparse and pystorm replaced by this project. Other lines, comments
included, are kept as they are. The JVM side (``project.clj``) has no counterpart: the
Storm runtime is not needed (INFO), anything else is a Java library the engines cannot use
(WARNING). Existing requirements files are never overwritten, which keeps it idempotent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from migrate.findings import Finding, Level
from migrate.outcome import FileOutcome, Status

THIS_PROJECT = "heron-storm-compat"
REPLACED = frozenset({"streamparse", "pystorm"})
STORM_RUNTIME = frozenset({"org.apache.storm/storm-core", "org.apache.storm/flux-core",
                           "org.apache.storm/storm-client", "org.apache.storm/storm-server"})

_REQUIREMENT = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>[^#]*?)(?P<comment>\s*#.*)?$"
)
_CLJ_DEPENDENCY = re.compile(r'\[\s*(?P<coord>[\w.\-]+(?:/[\w.\-]+)?)\s+"(?P<version>[^"]*)"')


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class DependenciesRule:
    """Write requirements files from virtualenv specs; report project.clj dependencies."""

    RULE_ID: ClassVar[str] = "dependencies"
    DESCRIPTION: ClassVar[str] = ("virtualenvs/*.txt become requirements files (streamparse "
                                  "replaced); project.clj JVM dependencies reported.")

    def apply(self, root: Path) -> list[FileOutcome]:
        """New requirements files, plus a findings-only outcome for project.clj."""
        if not root.is_dir():
            return []
        outcomes: list[FileOutcome] = []
        found = (
            sorted((root / "virtualenvs").glob("*.txt")) if (root / "virtualenvs").is_dir() else []
        )
        # Only regular files (or links to one) are read: a named pipe would block the
        # read and a directory cannot be one; either is reported, not migrated.
        specs = [spec for spec in found if spec.is_file()]
        outcomes.extend(self._not_a_file(spec, root) for spec in found if not spec.is_file())
        for spec in specs:
            name = "requirements.txt" if len(specs) == 1 else f"requirements-{spec.stem}.txt"
            target = root / name
            if not target.exists():
                outcomes.append(self._requirements(spec, target, root))
        clj = root / "project.clj"
        if clj.is_file():
            outcomes.append(self._clj(clj))
        return outcomes

    def _not_a_file(self, spec: Path, root: Path) -> FileOutcome:
        display = str(spec.relative_to(root))
        return FileOutcome(spec, Status.UNCHANGED, findings=[self._finding(
            display, 0, Level.WARNING,
            f"{display} is not a regular file; no requirements file is made from it",
            manual="write its requirements into requirements.txt by hand")])

    def _requirements(self, spec: Path, target: Path, root: Path) -> FileOutcome:
        display = str(spec.relative_to(root))
        try:
            lines = spec.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            return FileOutcome(spec, Status.FAILED, error=f"{display}: cannot read: {exc}")
        findings = [self._finding(display, 0, Level.INFO,
                                  f"{display} becomes {target.name}", new=target.name)]
        out: list[str] = []
        for number, line in enumerate(lines, start=1):
            match = _REQUIREMENT.match(line.strip())
            if not match or _normal(match["name"]) not in REPLACED:
                out.append(line)
                continue
            new = THIS_PROJECT + (match["comment"] or "")
            if any(_normal(o.split("#")[0].strip()) == THIS_PROJECT for o in out):
                new = ""  # already required once
            findings.append(self._finding(display, number, Level.INFO,
                                          f"{match['name']} replaced by {THIS_PROJECT}",
                                          old=line.strip(), new=new))
            if new:
                out.append(new)
        text = f"# written by heron-migrate from {display}\n" + "\n".join(out) + "\n"
        return FileOutcome(target, Status.CHANGED, "", text, findings, created=True,
                           source=spec)

    def _clj(self, clj: Path) -> FileOutcome:
        try:
            text = clj.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return FileOutcome(clj, Status.FAILED, error=f"project.clj: cannot read: {exc}")
        findings = []
        start = text.find(":dependencies")
        for match in _CLJ_DEPENDENCY.finditer(text, start if start >= 0 else len(text)):
            line = text.count("\n", 0, match.start()) + 1
            coord = match["coord"]
            if coord in STORM_RUNTIME:
                findings.append(self._finding("project.clj", line, Level.INFO,
                                              f"{coord} not needed: the engines replace Storm",
                                              old=match.group(0) + "]"))
            else:
                findings.append(self._finding(
                    "project.clj", line, Level.WARNING, f"JVM dependency {coord} not carried over",
                    old=match.group(0) + "]",
                    manual="Java libraries cannot run here; port what uses it to Python"))
        return FileOutcome(clj, Status.UNCHANGED, text, text, findings)

    def _finding(self, path: str, line: int, level: Level, message: str, *, old: str = "",
                 new: str = "", manual: str = "") -> Finding:
        return Finding(path=path, line=line, col=0 if line == 0 else 1, level=level,
                       rule_id=self.RULE_ID, message=message, old=old, new=new, manual=manual)
