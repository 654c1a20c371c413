"""``heron run``: the foreground run, with a live status line and a summary."""

from __future__ import annotations

import json
import logging
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from compat.storm_api.project import parse_cli_options
from engine.common.codec import log_tuple_path
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun, HeronRunResult
from engine.common.plan.preflight import preflight
from engine.common.submission import load_topology
from engine.config.errors import ConfigError
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.policies.config import HEALTHMGR_MODE, healthmgr_enabled
from engine.storm import LocalCluster, OutputCapture
from engine.storm.cluster import RunResult
from engine.tools.cli.display import make_console, status_renderable, summary_renderable

log = logging.getLogger("heron.cli")


def refuse_auto_scaling(config: dict[str, Any]) -> None:
    """``heron run`` has no scheduler to scale through and no container 0 to run a Health
    Manager in: a topology asking for one is refused (exit 2) rather than run without."""
    try:
        enabled = healthmgr_enabled(config)
    except HealthConfigError as exc:
        raise ConfigError(str(exc)) from None
    if enabled:
        raise ConfigError(f"{HEALTHMGR_MODE}: cluster: auto-scaling is for submitted "
                          "topologies (`heron submit`); `heron run` has no Health Manager. "
                          f"Remove the key or give -o {HEALTHMGR_MODE}=disabled")


def run_foreground(*, project: Path, name: str | None, env: str | None, engine: str,
                   time_limit: float, options: tuple[str, ...], ackers: int | None,
                   workers: int | None, debug: bool, config_file: Path | None,
                   log_dir: Path | None, capture: Path | None, as_json: bool,
                   multilang: bool = False, filter_file: Path | None = None,
                   env_filter: bool = False) -> int:
    """Run the topology in the foreground; returns the process exit code.

    ``filter_file`` and ``env_filter`` are a Flux file's ``--filter`` and ``--env-filter``.
    """
    loaded = load_topology(project, name=name, env=env, config_file=config_file,
                           cli_options=parse_cli_options(options), ackers=ackers,
                           workers=workers, debug=debug, filter_file=filter_file,
                           env_filter=env_filter)
    refuse_auto_scaling(dict(loaded.plan.config))
    preflight(loaded.compiled)  # e.g. a Kafka broker that does not answer: exit 2
    # the run's first line says which tuple path runs; bad input before it stays one line
    log_tuple_path(log)
    for note in loaded.notes:
        log.info("%s", note)
    if multilang and not time_limit:
        log.warning("spouts running as multi-lang subprocesses cannot report that they are "
                    "exhausted: the run goes on until --time passes or Ctrl-C")
    topology = loaded.plan.name
    log_dir = log_dir or loaded.project.root / "logs"
    console = make_console()
    serializer = str(loaded.project.config.get("serializer") or "json")
    if engine == "heron":
        submission = Submission.of(project, topology, env=env, config_file=config_file,
                                   options=parse_cli_options(options), ackers=ackers,
                                   workers=workers, debug=debug, flux=loaded.flux)
        runner = HeronLocalRun(loaded, submission, working_dir=_run_dir(log_dir, topology, "heron"),
                               multilang=multilang, multilang_serializer=serializer,
                               capture_jsonl=capture)
        label = f"{topology} [heron engine]"
        with Live(status_renderable(runner.snapshot(), 0.0, label), console=console,
                  refresh_per_second=4, transient=True) as live:
            heron_result = runner.run(time_limit=time_limit or None,
                                      on_progress=lambda stats, elapsed: live.update(
                                          status_renderable(stats, elapsed, label)))
        return _report(console, heron_result, engine, topology, as_json)
    cluster = LocalCluster(loaded.compiled, log_dir=log_dir,
                           # checkpoints of this run only, as a heron run's: a finite
                           # stateful run started again starts from its beginning
                           state_dir=_run_dir(log_dir, topology, "storm"),
                           capture=OutputCapture(jsonl=capture), multilang=multilang,
                           shell_cwd=loaded.shell_dir,
                           multilang_serializer=serializer)
    label = f"{topology} [storm engine]"
    with Live(status_renderable(cluster.snapshot(), 0.0, label), console=console,
              refresh_per_second=4, transient=True) as live:
        result = cluster.run(
            time_limit=time_limit or None,
            on_progress=lambda stats, elapsed: live.update(
                status_renderable(stats, elapsed, label)))
    return _report(console, result, engine, topology, as_json)


def _run_dir(log_dir: Path, topology: str, engine: str) -> Path:
    """A fresh directory per run under the log directory: a heron run's process logs,
    captures and embedded state manager's tree; either engine's checkpoints."""
    log_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{topology}-{engine}-", dir=log_dir))


def _report(console: Console, result: HeronRunResult | RunResult, engine: str, topology: str,
            as_json: bool) -> int:
    if as_json:
        checkpoints = getattr(result, "checkpoints", None)
        console.print_json(json.dumps({
            "topology": topology, "engine": engine, "reason": result.reason,
            "elapsed": result.elapsed, "error": result.error, "log_dir": str(result.log_dir),
            "components": {k: asdict(v) for k, v in result.components.items()},
            "checkpoints": asdict(checkpoints) if checkpoints is not None else None,
            "outputs": {f"{c.component}/{c.stream}": {
                "count": c.count, "top": [[list(k), v] for k, v in c.top(10)]}
                for c in result.capture.streams.values()},
        }, default=str))
    else:
        console.print(summary_renderable(result, engine, topology))
    return 1 if result.reason == "error" else 0
