"""Failure injection on the ``heron`` engine: the first task of the target bolt kills its
own OS process (SIGKILL) at its N-th tuple, once per run; the executor restarts it and
the at-least-once roots it lost replay. The wrapper project that arms the kill rebuilds
the same topology; a kill that never happens is an error; a multi-lang target is
skipped, saying why."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from conformance.capture import read_capture
from conformance.catalogue import Kill, case_named
from conformance.engines import HeronAdapter, _project_roots, isolated_imports
from conformance.kill_wrapper import (
    KILL_AFTER,
    KILL_MARKER,
    KillOnTupleMixin,
    KillWrapError,
    kill_topology,
    wrap_project_for_kill,
)
from conformance.model import SemanticClass, Verdict
from conformance.runner import Runner


def no_spark():
    pytest.fail("this run should need no diff, so no Spark")


def _components(plan):
    return {name: (c.kind, c.parallelism, sorted(c.outputs),
                   sorted((i.source, i.stream, str(i.grouping)) for i in c.inputs))
            for name, c in plan.components.items()}


# -- the wrapper ------------------------------------------------------------------------------
def test_the_wrapper_project_rebuilds_the_same_topology_with_the_bolt_armed(tmp_path):
    from engine.common.submission import load_topology

    case = case_named("replay_after_kill")
    with isolated_imports(*_project_roots(case.project)):
        original = load_topology(case.project, name=case.topology)
    wrapper = wrap_project_for_kill(original.project.root, original.topology_file, "tail",
                                    tmp_path / "wrapped")
    assert (wrapper / "topologies" / "replay_after_kill.py").is_file()
    assert (wrapper / "src").resolve() == (case.project / "src").resolve()
    options = {KILL_AFTER: 3, KILL_MARKER: str(tmp_path / "marker.json")}
    with isolated_imports(*_project_roots(wrapper), *_project_roots(case.project)):
        wrapped = load_topology(wrapper, name=case.topology, cli_options=options)
        tail = wrapped.compiled.component_classes["tail"]
        relay = wrapped.compiled.component_classes["relay"]
        assert issubclass(tail, KillOnTupleMixin) and tail.__name__ == "Killing_tail"
        assert not issubclass(relay, KillOnTupleMixin)
        assert wrapped.plan.name == original.plan.name
        assert _components(wrapped.plan) == _components(original.plan)
        assert wrapped.plan.config[KILL_AFTER] == 3
        with pytest.raises(KillWrapError, match="is a spout"):
            kill_topology(original.topology_file, "numbers")
        with pytest.raises(KillWrapError, match="no component 'nope'"):
            kill_topology(original.topology_file, "nope")


def test_a_multilang_target_is_skipped_with_the_reason():
    case = case_named("multilang_bolt")
    adapter = HeronAdapter()
    reason = adapter.skip_reason(case, Kill("shout", 3))
    assert reason is not None
    assert "multi-lang" in reason and "'shout'" in reason
    # the Python bolt of the same topology can be killed
    assert adapter.skip_reason(case, Kill("exclaim", 3)) is None


# -- real runs --------------------------------------------------------------------------------
def _processes_of(work: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(str(work) in part for part in proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_kill_cases_pass_on_heron_and_the_process_really_died_and_came_back(spark,
                                                                           tmp_path):
    """replay_after_kill (its own kill) and, under --inject-failures,
    reliable_spout_failing_bolt (its ``inject``: picky at its 20th tuple)."""
    cases = [case_named("replay_after_kill"), case_named("reliable_spout_failing_bolt")]
    suite = Runner([HeronAdapter()], spark=spark, report_dir=tmp_path,
                   inject_failures=True).run(cases)
    for outcome, component, after in zip(suite.cases, ("tail", "picky"), (20, 20)):
        (run,) = outcome.runs
        assert run.verdict is Verdict.PASS, (outcome.case, run.reason)
        assert outcome.allowed is SemanticClass.AT_LEAST_ONCE
        assert run.diff.counts.missing == 0, outcome.case
        assert "injected-failure" in outcome.tags
        described = run.metadata["injected failure"]
        assert re.match(rf"killed task \d+ of {component} during its tuple {after}, before "
                        r"processing it: its process \(pid \d+\) sent itself SIGKILL", described)
        assert f"its executor restarted container_1_{component}_" in described
        assert any("exited with status -9" in line for line in run.metadata["task failures"])
        # the kill really happened to an OS process, which was restarted
        work = (tmp_path / run.metadata["logs"]).parent
        marker = json.loads((work / "kill" / "killed.json").read_text())
        assert (marker["component"], marker["tuple"]) == (component, after)
        instance_log = next((work / "logs").glob(f"container_*_{component}_{marker['task']}.log"))
        text = instance_log.read_text()
        killed_at = text.index(f"killing this process (pid {marker['pid']}, SIGKILL)")
        assert "registered with the stream manager" in text[killed_at:]  # a second start
        assert text.count("killing this process") == 1  # once per run
        restarted = int(re.search(r"restarted container_\S+ \(restart 1, pid (\d+)\)",
                                  described).group(1))
        assert restarted != marker["pid"]
        # nothing of the run is left running: not the killed process, not its successor
        for pid in (marker["pid"], restarted):
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
        assert _processes_of(work) == []
        # each task wrote its own capture file; the killed task's new process wrote a
        # second one (never appending to the file the kill may have cut short), and
        # every file reads (a cut-short last line at most)
        captures = tmp_path / run.outputs[0]
        assert captures.is_dir(), run.outputs
        names = {p.name for p in captures.glob("*.jsonl")}
        killed = f"{component}_{marker['task']}"
        assert {f"{killed}.jsonl", f"{killed}.1.jsonl"} <= names, names
        assert any(n.startswith("numbers_") for n in names), names
        assert run.diff.inputs["heron"]["files"] == len(names)
        records = list(read_capture(captures, typed=True))
        assert {(r["component"], r["task"]) for r in records
                if r["component"] == component} >= {(component, marker["task"])}
        # the spout's rows carry its message id (its n); the bolts' rows have none
        spouted = [r for r in records if r["component"] == "numbers"]
        assert spouted and all(r["msg_id"] == r["values"][0] for r in spouted)
        assert all("msg_id" not in r for r in records if r["component"] != "numbers")
        assert not list((work / "capture").glob("*.tuples"))  # no second copy kept
    # the lost roots replayed: upstream rows repeat, none is missing
    replay = suite.cases[0].runs[0]
    assert replay.diff.observed is SemanticClass.AT_LEAST_ONCE
    assert replay.diff.counts.duplicate_extras >= 1
    assert suite.exit_code() == 0


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_kill_that_never_happens_is_an_error_on_heron(tmp_path):
    case = replace(case_named("replay_after_kill"), kill=Kill("tail", 100_000))
    suite = Runner([HeronAdapter()], spark=no_spark, report_dir=tmp_path).run([case])
    run = suite.cases[0].runs[0]
    assert run.verdict is Verdict.ERROR
    assert "the failure was not injected" in run.reason
    assert re.search(r"tail task \d+ received only \d+ tuple\(s\), fewer than the 100000 at "
                     "which it was to be killed", run.reason), run.reason
    assert suite.exit_code() == 2
