"""The roles that never compile a topology start without the compiler behind it.

Every Stream Manager, Topology Master, Metrics Manager and executor is a fresh Python
process; a word count on two containers starts a dozen of them, and each restart starts
one again. Only instances (and the submitter) rebuild the topology, so the others must not
pay for the plan compiler, the Flux reader, the project loader or the process spawner at
start-up (about 0.2 s of CPU each). Checked by what a role's import leaves in
``sys.modules``, not by timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: what only a process that compiles a topology or spawns children needs
COMPILING_ONLY = ("engine.common.submission", "engine.common.plan.compiler",
                  "compat.flux", "compat.storm_api.project", "yaml")
SPAWNING_ONLY = ("engine.common.process.supervisor", "engine.common.process.spawn", "psutil")


def loaded_after_import(module: str, then: str = "") -> set[str]:
    """The modules a fresh interpreter holds after importing ``module`` (and running
    ``then``)."""
    code = f"import sys, json\nimport {module}\n{then}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=60, check=True)
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("role", ["engine.stmgr.main", "engine.tmanager.main",
                                  "engine.metricsmgr.main"])
def test_a_role_that_never_compiles_or_spawns_loads_neither(role):
    loaded = loaded_after_import(role)
    assert not loaded & {*COMPILING_ONLY, *SPAWNING_ONLY}, role


def test_the_executor_spawns_but_does_not_compile():
    loaded = loaded_after_import("engine.executor.main")
    assert "engine.common.process.supervisor" in loaded
    assert not loaded & set(COMPILING_ONLY)


def test_a_submission_still_rebuilds_the_topology_on_demand(tmp_path):
    """The compiler loads when an instance asks for the topology, not before; the Flux
    reader only for a Flux file."""
    code = ("import sys; from engine.common.launch import Submission; "
            "assert 'engine.common.submission' not in sys.modules; "
            f"s = Submission(project={str(REPO / 'examples' / 'wordcount')!r}, "
            "name='wordcount'); loaded = s.load(); "
            "assert 'compat.flux.reader' not in sys.modules; "
            "print(sorted(loaded.plan.components))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['count_bolt', 'word_spout']"


def test_the_local_scheduler_service_loads_no_cluster_plug_in():
    """Every local topology starts the scheduler service: Slurm's packaging and uploader
    and Kubernetes' manifests load only for a topology submitted to them."""
    loaded = loaded_after_import(
        "engine.scheduler.service",
        "from engine.scheduler.registry import scheduler_class; scheduler_class('local')")
    assert "engine.scheduler.local" in loaded
    assert not {m for m in loaded if m.startswith(("engine.scheduler.slurm",
                                                   "engine.scheduler.kubernetes",
                                                   "engine.uploader"))}


def test_a_command_that_reads_state_loads_no_submitter_or_scheduler():
    """``heron list``, ``metrics``, ``logs``... load their own module only: the submitter,
    packing and the scheduler plug-ins are ``heron submit``'s."""
    loaded = loaded_after_import("engine.tools.cli.main, engine.tools.cli.list_command")
    assert "engine.tools.cli.list_command" in loaded
    assert "engine.tools.cli.submit_command" not in loaded
    # (the error classes the CLI names are light modules of their own)
    assert not {m for m in loaded if m.startswith((
        "engine.submitter.submitter", "engine.scheduler.local", "engine.scheduler.slurm",
        "engine.scheduler.kubernetes.manifests", "engine.packing", "engine.storm", "jinja2"))}
