"""``heron run TOPOLOGY.yaml --filter FILE.properties``: Storm's Flux word count (pystorm
multilang components under Flux's shell wrappers) on both engines, with exact counts;
bad Flux input in one line with exit status 2; a submission that rebuilds the same
topology without the filter file."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "flux_wordcount"
FLUX = EXAMPLE / "wordcount.yaml"


def _heron(*args: str, cwd: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.tools.cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def _expected(rounds: int) -> dict[str, int]:
    sentences = runpy.run_path(str(EXAMPLE / "resources" / "sentences.py"))["SENTENCES"]
    counts = Counter(word for sentence in sentences for word in sentence.split())
    return {word: n * rounds for word, n in counts.items()}


def _final_counts(capture: Path) -> dict[str, int]:
    """The last count of each word the count bolt emitted (its total)."""
    counts: dict[str, int] = {}
    for line in capture.read_text().splitlines():
        record = json.loads(line)
        assert (record["component"], record["stream"]) == ("count", "default")
        word, count = record["values"]
        counts[word] = max(counts.get(word, 0), count)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("engine, seconds", [("storm", 6), ("heron", 10)])
def test_flux_word_count_is_exact_on_both_engines(engine, seconds, tmp_path):
    props = tmp_path / "test.properties"
    props.write_text("sentence.rounds = 3\nsplit.parallelism = 2\ncount.parallelism: 2\n"
                     "max.spout.pending=50\n")
    capture = tmp_path / "capture.jsonl"
    # run from another directory: the shell components still start in resources/
    proc = _heron("run", str(FLUX), "--filter", str(props), "--engine", engine,
                  "-t", str(seconds), "--capture", str(capture), "--json",
                  "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads(proc.stdout)
    assert (summary["topology"], summary["engine"], summary["error"]) == (
        "flux-wordcount", engine, None)
    assert summary["components"]["split"]["tasks"] == 2
    assert _final_counts(capture) == _expected(3)


def test_a_java_class_is_refused_in_one_line_before_anything_starts(tmp_path):
    flux = tmp_path / "bad.yaml"
    flux.write_text(FLUX.read_text().replace(
        "org.apache.storm.flux.wrappers.bolts.FluxShellBolt",
        "org.apache.storm.testing.TestWordCounter", 1))
    proc = _heron("run", str(flux), "--filter", str(EXAMPLE / "dev.properties"), "-t", "5",
                  cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"heron: error: {flux}:22: bolt 'split': Java class "
                           "org.apache.storm.testing.TestWordCounter cannot run on this engine")
    assert not (tmp_path / "logs").exists()


def test_an_unknown_key_and_a_filter_without_flux_are_refused(tmp_path):
    flux = tmp_path / "typo.yaml"
    flux.write_text(FLUX.read_text().replace("parallelism: 1", "paralelism: 1"))
    proc = _heron("run", str(flux), "--filter", str(EXAMPLE / "dev.properties"), cwd=tmp_path,
                  timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"heron: error: {flux}:19: unknown key 'paralelism' in a "
                                   "spout (known: id, className, constructorArgs, properties, "
                                   "configMethods, factory, factoryArgs, parallelism, numTasks, "
                                   "onHeapMemoryLoad, offHeapMemoryLoad, cpuLoad, config)")
    proc = _heron("run", str(REPO / "examples" / "wordcount"), "--filter", "x.properties",
                  cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    assert "--filter and --env-filter go with a Flux file" in proc.stderr


def test_the_submission_rebuilds_the_same_topology_without_filter_or_environment(
        tmp_path, monkeypatch, isolated_imports):
    from engine.common.launch import LaunchSpec, Submission
    from engine.common.submission import load_topology

    flux = tmp_path / "flux" / "wordcount.yaml"
    flux.parent.mkdir()
    flux.write_text(FLUX.read_text().replace('name: "flux-wordcount"', 'name: "${ENV-WC_NAME}"'))
    (flux.parent / "resources").mkdir()
    props = tmp_path / "dev.properties"
    props.write_text((EXAMPLE / "dev.properties").read_text().replace(
        "split.parallelism = 2", "split.parallelism = 3"))
    monkeypatch.setenv("WC_NAME", "from-env")
    loaded = load_topology(flux, filter_file=props, env_filter=True)
    assert loaded.plan.name == "from-env"
    assert loaded.shell_dir == flux.parent / "resources"
    assert loaded.project.root == flux.parent
    submission = Submission.of(flux, loaded.plan.name, env=None, config_file=None, options={},
                               ackers=None, workers=None, flux=loaded.flux)
    spec = LaunchSpec(topology_name="from-env", topology_id="from-env-1",
                      working_dir=str(tmp_path / "work"), submission=submission)
    spec.save()
    props.unlink()
    monkeypatch.delenv("WC_NAME")
    monkeypatch.chdir(tmp_path / "work")
    again = LaunchSpec.load(spec.path)
    assert again.submission.flux_values["ENV-WC_NAME"] == "from-env"
    rebuilt = again.load_topology()
    assert rebuilt.plan.name == "from-env"
    assert rebuilt.plan.components["split"].parallelism == 3
    assert rebuilt.plan.to_proto(topology_id="x") == loaded.plan.to_proto(topology_id="x")


def test_heron_submit_local_records_the_flux_file_and_its_values(heron_home, sweep,
                                                                  isolated_imports, tmp_path):
    """With stand-ins for the engine's processes: the launch file names the YAML file,
    the substitution values and the shell directory; heron kill removes it."""
    from engine.common.launch import LaunchSpec
    from tests.engine.cli.conftest import heron

    result = heron("submit", "local", str(FLUX), "--filter", str(EXAMPLE / "dev.properties"))
    assert result.exit_code == 0, result.output
    assert "submitted topology 'flux-wordcount'" in result.output
    spec = LaunchSpec.load(heron_home / "topologies" / "flux-wordcount")
    assert spec.submission.project == str(FLUX)
    assert spec.submission.flux_values == {"max.spout.pending": "100", "sentence.rounds": "5",
                                           "split.parallelism": "2", "count.parallelism": "2"}
    assert spec.shell_cwd == str(EXAMPLE / "resources")
    assert spec.load_topology().plan.components["count"].parallelism == 2
    assert heron("kill", "flux-wordcount", "--wait", "0").exit_code == 0
