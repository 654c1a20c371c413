"""Rule ``config``: ``config.json`` becomes ``heron.yaml`` (DESIGN, "Configuration").

Not a libcst codemod: it works on the project directory. Environments, their ``options``
(Storm option names kept), ``log`` settings, ``serializer`` and ``topology_specs`` are
carried over unchanged, so the project reads the same options from either file. Settings
that only mean something to ``sparse`` on a Storm cluster (nimbus, ssh, virtualenvs,
workers) are dropped and reported as INFO; keys we do not know are kept and reported as
WARNING. ``config.json`` is left in place: ``heron.yaml`` wins when both exist. Nothing
is done when ``heron.yaml`` already exists, which makes the rule idempotent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import yaml

from migrate.findings import Finding, Level
from migrate.outcome import FileOutcome, Status

CARRIED_TOP = ("serializer", "topology_specs", "envs")
DROPPED_TOP = {"virtualenv_specs": "virtualenvs are not used; see the dependencies rule",
               "library": "no JVM library is submitted"}
CARRIED_ENV = ("options", "log", "log_path", "log_file")
DROPPED_ENV = {key: "sparse's Storm-cluster setting has no meaning here" for key in (
    "user", "ssh_password", "nimbus", "workers", "use_ssh_for_nimbus", "virtualenv_root",
    "use_virtualenv", "install_virtualenv", "virtualenv_name", "virtualenv_flags")}

HEADER = ("# heron.yaml: written by heron-migrate from config.json (config.json is ignored\n"
          "# while this file exists). Storm option names are kept as they are.\n")


class ConfigRule:
    """Write heron.yaml from config.json, reporting what was dropped or not understood."""

    RULE_ID: ClassVar[str] = "config"
    DESCRIPTION: ClassVar[str] = "config.json becomes heron.yaml; cluster-only settings reported."

    def apply(self, root: Path) -> list[FileOutcome]:
        """The outcome for ``heron.yaml`` (a new file), a failure of ``config.json`` (the file
        that could not be read), or nothing when there is nothing to do."""
        source, target = root / "config.json", root / "heron.yaml"
        if not root.is_dir() or not source.is_file() or target.exists():
            return []
        try:
            config = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            return [FileOutcome(source, Status.FAILED,
                                error=f"config.json: cannot convert to heron.yaml: {exc}")]
        if not isinstance(config, dict):
            return [FileOutcome(source, Status.FAILED,
                                error="config.json: the top level must be an object")]
        findings: list[Finding] = []
        converted = self._convert(config, findings)
        text = HEADER + yaml.safe_dump(converted, sort_keys=False, allow_unicode=True)
        findings.insert(0, self._finding(Level.INFO, "config.json converted to heron.yaml",
                                         new="heron.yaml"))
        return [FileOutcome(target, Status.CHANGED, "", text, findings, created=True,
                            source=source)]

    def _convert(self, config: dict[str, Any], findings: list[Finding]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in config.items():
            if key == "envs" and isinstance(value, dict):
                out[key] = {name: self._env(name, env, findings) for name, env in value.items()}
            elif key in CARRIED_TOP:
                out[key] = value
            elif key in DROPPED_TOP:
                findings.append(self._finding(Level.INFO, f"{key} dropped: {DROPPED_TOP[key]}",
                                              old=f"{key}: {json.dumps(value)}"))
            else:
                out[key] = value
                findings.append(self._finding(
                    Level.WARNING, f"unknown setting {key!r} kept as it is",
                    old=key, manual=f"check whether {key!r} is needed; nothing here reads it"))
        return out

    def _env(self, name: str, env: Any, findings: list[Finding]) -> Any:
        if not isinstance(env, dict):
            return env
        out: dict[str, Any] = {}
        for key, value in env.items():
            if key in CARRIED_ENV:
                out[key] = value
            elif key in DROPPED_ENV:
                findings.append(self._finding(
                    Level.INFO, f"envs.{name}.{key} dropped: {DROPPED_ENV[key]}",
                    old=f"{key}: {json.dumps(value)}"))
            else:
                out[key] = value
                findings.append(self._finding(
                    Level.WARNING, f"unknown setting envs.{name}.{key!r} kept as it is",
                    old=key, manual="check whether it is needed; nothing here reads it"))
        return out

    def _finding(self, level: Level, message: str, *, old: str = "", new: str = "",
                 manual: str = "") -> Finding:
        return Finding(path="config.json", line=0, col=0, level=level, rule_id=self.RULE_ID,
                       message=message, old=old, new=new, manual=manual)
