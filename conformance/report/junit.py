"""JUnit XML for CI: one ``<testcase>`` per case and engine (the engine against the
expected rows) and one per case and engine pair.

pass → an empty testcase; fail → ``<failure>`` with the observed and allowed class, the
counts and the first differing rows; error → ``<error>``; skipped by capability →
``<skipped>``; known failure → ``<skipped type="known-failure">`` (JUnit has no
expected-failure state, and a known failure must not fail CI). The reproduce command and
raw output paths go to ``<system-out>``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from conformance.model import (
    CaseResult,
    DiffResult,
    EngineRun,
    PairResult,
    SuiteResult,
    Verdict,
)
from conformance.report.text import clean_text, describe_inputs, value_text

__all__ = ["junit_xml"]

SUITE_NAME = "heron-conformance"


def _classname(case: CaseResult) -> str:
    name = f"conformance.{case.case}"
    return f"{name}[repeat {case.repeat}]" if case.repeat else name


def _diff_text(diff: DiffResult, allowed: str | None) -> str:
    c = diff.counts
    lines = [f"{diff.left} vs {diff.right} ({diff.comparison}): observed {diff.observed.value}"
             + (f", allowed {allowed}" if allowed else ""),
             (f"rows {diff.left}={c.rows_left} {diff.right}={c.rows_right}; "
             f"distinct {diff.left}={c.distinct_left} {diff.right}={c.distinct_right}"),
             (f"missing={c.missing} duplicate_extras={c.duplicate_extras} "
             f"novel_extras={c.novel_extras} differing_rows={c.differing}")]
    inputs = describe_inputs(diff)
    if inputs:
        lines.append(f"inputs: {inputs}")
    if diff.samples:
        lines.append(f"first {len(diff.samples)} differing rows "
                     f"({diff.left} copies, {diff.right} copies):")
        lines += [f"  {value_text(s.row)}  {s.left} {s.right}" for s in diff.samples]
    return "\n".join(clean_text(line) for line in lines)


def _outcome(testcase: ET.Element, verdict: Verdict, reason: str,
             diff: DiffResult | None, allowed: str | None) -> None:
    reason = clean_text(reason)
    if verdict is Verdict.PASS:
        return
    if verdict is Verdict.FAIL:
        message = (f"observed {diff.observed.value}" + (f", allowed {allowed}" if allowed else "")
                   if diff else reason or "conformance failure")
        el = ET.SubElement(testcase, "failure", message=clean_text(message),
                           type=f"conformance.{diff.observed.name.lower()}" if diff
                           else "conformance.fail")
        el.text = "\n\n".join(t for t in (reason, _diff_text(diff, allowed) if diff else "")
                              if t)
    elif verdict is Verdict.ERROR:
        el = ET.SubElement(testcase, "error", message=_first_line(reason) or "harness error",
                           type="conformance.error")
        el.text = reason
    elif verdict is Verdict.SKIPPED:
        ET.SubElement(testcase, "skipped", message=reason or "skipped", type="capability")
    else:  # known failure
        ET.SubElement(testcase, "skipped", message=f"known failure: {reason}".rstrip(": "),
                      type="known-failure")


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit] + "..."


def _run_case(parent: ET.Element, case: CaseResult, run: EngineRun) -> ET.Element:
    tc = ET.SubElement(parent, "testcase", classname=clean_text(_classname(case)),
                       name=clean_text(f"{run.engine} vs expected"), time=f"{run.elapsed:.3f}")
    _outcome(tc, run.verdict, run.reason, run.diff, case.allowed.value)
    out = []
    if run.command:
        out.append(f"reproduce: {run.command}")
    if run.run_id:
        out.append(f"run id: {run.run_id}")
    out += [f"output: {p}" for p in run.outputs]
    if out:
        ET.SubElement(tc, "system-out").text = clean_text("\n".join(out))
    return tc


def _pair_case(parent: ET.Element, case: CaseResult, pair: PairResult) -> ET.Element:
    tc = ET.SubElement(parent, "testcase", classname=clean_text(_classname(case)),
                       name=clean_text(f"{pair.left} vs {pair.right}"), time="0.000")
    _outcome(tc, pair.verdict, pair.reason, pair.diff, None)
    return tc


def junit_xml(suite: SuiteResult) -> str:
    """The suite as a JUnit XML document (text, with an XML declaration)."""
    root = ET.Element("testsuites", name=SUITE_NAME)
    ts = ET.SubElement(root, "testsuite", name=SUITE_NAME)
    props = ET.SubElement(ts, "properties")
    prop_values: dict[str, Any] = {"command": suite.command,
                                   "engines": ",".join(suite.engines)}
    prop_values.update({f"environment.{k}": v for k, v in suite.environment.items()})
    for key in sorted(prop_values):
        value = prop_values[key]
        ET.SubElement(props, "property", name=clean_text(key),
                      value=clean_text(value) if isinstance(value, str) else value_text(value))
    cases = sorted(suite.cases, key=lambda c: (c.case, c.repeat))
    for case in cases:
        for run in case.runs:
            _run_case(ts, case, run)
        for pair in case.pairs:
            _pair_case(ts, case, pair)
    testcases = ts.findall("testcase")
    counts = {"tests": len(testcases),
              "failures": sum(1 for t in testcases if t.find("failure") is not None),
              "errors": sum(1 for t in testcases if t.find("error") is not None),
              "skipped": sum(1 for t in testcases if t.find("skipped") is not None)}
    for el in (root, ts):
        for key, value in counts.items():
            el.set(key, str(value))
        el.set("time", f"{suite.elapsed:.3f}")
    if suite.started:
        ts.set("timestamp", clean_text(suite.started))
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")
