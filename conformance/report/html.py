"""The HTML report: one self-contained page (inline CSS, no scripts, no external
assets) rendered with jinja2 from a :class:`~conformance.model.SuiteResult` read back
from ``results.json``.

Everything shown comes from tuple values, case names and engine messages, which are
untrusted text: the environment autoescapes every substitution, links are built only
from relative paths (or ``file:`` URIs of absolute ones), and a Content-Security-Policy
forbids scripts outright. Orders are stable (cases by name and repeat, keys sorted) and
the page carries no render time, so re-rendering the same ``results.json`` gives the
same bytes and two reports can be diffed.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2

from conformance.model import (
    CaseResult,
    DiffResult,
    EngineRun,
    PairResult,
    SemanticClass,
    SuiteResult,
    Verdict,
)
from conformance.report.text import clean_text, describe_inputs, value_text

__all__ = ["VERDICT_ORDER", "render_html"]

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: summary order, worst last
VERDICT_ORDER = (Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.SKIPPED,
                 Verdict.KNOWN_FAILURE)
#: CSS class and the text shown: the verdict is always written, never colour alone
VERDICT_BADGE = {
    Verdict.PASS: ("pass", "\u2713 pass"),
    Verdict.FAIL: ("fail", "\u2717 fail"),
    Verdict.ERROR: ("error", "! error"),
    Verdict.SKIPPED: ("skipped", "\u2013 skipped"),
    Verdict.KNOWN_FAILURE: ("known", "\u25c7 known failure"),
}
#: longest value text shown inline; longer values fold into a <details>
MAX_INLINE = 160


@dataclass
class Badge:
    css: str
    text: str


def badge(verdict: Verdict) -> Badge:
    css, text = VERDICT_BADGE[verdict]
    return Badge(css, text)


@dataclass
class Cell:
    """One cell of a differing-rows table."""

    text: str
    folded: bool = False
    short: str = ""


def cell(value: Any, plain: bool = False) -> Cell:
    """A table cell for one value: JSON text (``plain``: strings unquoted)."""
    text = clean_text(value) if plain and isinstance(value, str) else value_text(value)
    if len(text) <= MAX_INLINE:
        return Cell(text)
    return Cell(text, folded=True, short=text[:MAX_INLINE] + "\u2026")


@dataclass
class Link:
    text: str
    href: str | None  # None: shown as text (not a path we can link safely)


@dataclass
class DiffView:
    left: str
    right: str
    observed: str
    allowed: str | None
    within: bool | None
    comparison: str
    counts: list[tuple[str, Any, Any]]        # label, left, right (None: not per side)
    differences: list[tuple[str, int, str]]   # label, copies, meaning
    affected: str
    differing: int
    sample_header: list[str]
    samples: list[dict[str, Any]]
    notes: list[str]
    #: the sides' sizes and the Spark job's time, one line ("" for older results)
    inputs: str = ""
    #: per stream: (component/stream, rows left, rows right, differing), several streams
    streams: list[tuple[str, int, int, int]] = field(default_factory=list)


@dataclass
class ComparisonView:
    """One engine against the expected rows, or one engine pair."""

    anchor: str
    title: str
    badge: Badge
    reason: str = ""
    run_id: str = ""
    elapsed: str = ""
    command: str = ""
    outputs: list[Link] = field(default_factory=list)
    metadata: list[tuple[str, str]] = field(default_factory=list)
    diff: DiffView | None = None


@dataclass
class MatrixCell:
    anchor: str | None
    badge: Badge | None
    observed: str = ""
    note: str = ""


@dataclass
class CaseView:
    anchor: str
    name: str
    repeat: int
    description: str
    allowed: str
    tags: list[str]
    badge: Badge
    cells: list[MatrixCell]
    sections: list[ComparisonView]


def _slug(text: str, limit: int = 48) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:limit]
    return slug or "x"


def _elapsed(seconds: float) -> str:
    if not seconds:
        return ""
    if seconds < 60:
        return f"{seconds:.2f} s"
    minutes, secs = divmod(seconds, 60)
    return f"{int(minutes)} min {secs:.0f} s"


def safe_href(path: str, link_base: str = "") -> str | None:
    """A link to a raw output: relative paths (resolved against ``link_base``, the report
    directory's way to the results' directory) percent-encoded; absolute paths as
    ``file:`` URIs; anything with a scheme or host (``javascript:``, ``http:``) is not
    linked."""
    if not path or "\x00" in path:
        return None
    parts = urlsplit(path)
    if parts.scheme or parts.netloc:
        return None
    if path.startswith("/"):
        return Path(path).as_uri()
    joined = posixpath.normpath(posixpath.join(link_base, PurePosixPath(path).as_posix()))
    return quote(joined, safe="/-_.~")


def _diff_view(diff: DiffResult, allowed: SemanticClass | None) -> DiffView:
    c = diff.counts
    reference = max(c.rows_left, c.rows_right, 1)
    changed = c.missing + c.duplicate_extras + c.novel_extras
    per_key = diff.comparison == "per_key"
    if per_key:
        header = ["component", "stream", "key", "final value"]
    else:
        header = ["component", "stream", "values"]
    samples = []
    for row in diff.samples:
        values = list(row.row)
        component, stream = (values + [None, None])[:2]
        rest = values[2:]
        if per_key:
            shown = [cell(component, True), cell(stream, True), cell(rest[:-1]),
                     cell(rest[-1] if rest else None)]
        else:
            shown = [cell(component, True), cell(stream, True), cell(rest)]
        delta = row.right - row.left
        samples.append({"cells": shown, "left": row.left, "right": row.right,
                        "delta": f"{delta:+d}",
                        "kind": ("missing" if delta < 0 else
                                 "novel" if row.left == 0 else "duplicate")})
    return DiffView(
        left=clean_text(diff.left), right=clean_text(diff.right),
        observed=diff.observed.value,
        allowed=allowed.value if allowed is not None else None,
        within=diff.observed.within(allowed) if allowed is not None else None,
        comparison="final value per key" if per_key else "rows",
        counts=[("rows", c.rows_left, c.rows_right),
                ("distinct rows", c.distinct_left, c.distinct_right)],
        differences=[
            ("missing", c.missing, (f"copies of {clean_text(diff.left)} rows "
                                   f"{clean_text(diff.right)} lacks")),
            ("duplicate extras", c.duplicate_extras,
             f"extra copies of rows {clean_text(diff.left)} has"),
            ("novel extras", c.novel_extras,
             f"copies of rows {clean_text(diff.left)} never had"),
        ],
        affected=f"{100.0 * changed / reference:.1f}%",
        differing=c.differing,
        sample_header=header,
        samples=samples,
        notes=[clean_text(n) for n in diff.notes],
        inputs=clean_text(describe_inputs(diff)),
        streams=[(clean_text(f"{s.get('component')}/{s.get('stream')}"),
                  int(s.get("rows_left", 0)), int(s.get("rows_right", 0)),
                  int(s.get("differing", 0))) for s in diff.streams],
    )


def _metadata(meta: dict[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key in sorted(meta, key=str):
        value = meta[key]
        out.append((clean_text(key), clean_text(value) if isinstance(value, str)
                    else value_text(value)))
    return out


def _run_view(case: CaseResult, run: EngineRun, anchor: str, link_base: str) -> ComparisonView:
    return ComparisonView(
        anchor=anchor, title=f"{clean_text(run.engine)} vs expected",
        badge=badge(run.verdict), reason=clean_text(run.reason),
        run_id=clean_text(run.run_id), elapsed=_elapsed(run.elapsed),
        command=clean_text(run.command),
        outputs=[Link(clean_text(p), safe_href(p, link_base)) for p in run.outputs],
        metadata=_metadata(run.metadata),
        diff=_diff_view(run.diff, case.allowed) if run.diff else None)


def _pair_view(case: CaseResult, pair: PairResult, anchor: str) -> ComparisonView:
    return ComparisonView(
        anchor=anchor, title=f"{clean_text(pair.left)} vs {clean_text(pair.right)}",
        badge=badge(pair.verdict), reason=clean_text(pair.reason),
        # the runner judges a pair (its verdict is shown); the page does not re-judge it
        diff=_diff_view(pair.diff, None) if pair.diff else None)


def _short_reason(reason: str, verdict: Verdict, limit: int = 80) -> str:
    """One line of a reason for a matrix cell: the first line, or for an error the last
    (a traceback ends with the exception)."""
    lines = [line.strip() for line in clean_text(reason).splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if verdict is Verdict.ERROR else lines[0]
    return line if len(line) <= limit else line[:limit] + "\u2026"


def _columns(suite: SuiteResult) -> list[tuple[str, str, str]]:
    """Matrix columns: ("run", engine, "") per engine, then ("pair", left, right)."""
    engines = list(dict.fromkeys(suite.engines))
    pairs: list[tuple[str, str]] = []
    for case in suite.cases:
        for run in case.runs:
            if run.engine not in engines:
                engines.append(run.engine)
        for pair in case.pairs:
            if (pair.left, pair.right) not in pairs:
                pairs.append((pair.left, pair.right))
    return [("run", e, "") for e in engines] + [("pair", a, b) for a, b in pairs]


def build_view(suite: SuiteResult, link_base: str = "") -> dict[str, Any]:
    """Everything the template shows, as plain values (the template only lays it out)."""
    columns = _columns(suite)
    cases = sorted(enumerate(suite.cases), key=lambda ic: (ic[1].case, ic[1].repeat, ic[0]))
    views = []
    for index, (_, case) in enumerate(cases, start=1):
        anchor = f"case-{index}-{_slug(case.case)}"
        if case.repeat:
            anchor += f"-r{case.repeat}"
        runs = {r.engine: r for r in case.runs}
        pairs = {(p.left, p.right): p for p in case.pairs}
        cells, sections = [], []
        for kind, a, b in columns:
            item: EngineRun | PairResult | None
            if kind == "run":
                item = runs.get(a)
                sub = f"{anchor}-{_slug(a)}"
            else:
                item = pairs.get((a, b))
                sub = f"{anchor}-{_slug(a)}-vs-{_slug(b)}"
            if item is None:
                cells.append(MatrixCell(None, None, note="not run"))
                continue
            if isinstance(item, EngineRun):
                sections.append(_run_view(case, item, sub, link_base))
            else:
                sections.append(_pair_view(case, item, sub))
            cells.append(MatrixCell(
                sub, badge(item.verdict),
                observed=item.diff.observed.value if item.diff else "",
                note=_short_reason(item.reason, item.verdict)
                if item.verdict in (Verdict.SKIPPED, Verdict.KNOWN_FAILURE, Verdict.ERROR)
                else ""))
        views.append(CaseView(
            anchor=anchor, name=clean_text(case.case), repeat=case.repeat,
            description=clean_text(case.description), allowed=case.allowed.value,
            tags=[clean_text(t) for t in sorted(case.tags)], badge=badge(case.verdict),
            cells=cells, sections=sections))
    totals = {v: 0 for v in VERDICT_ORDER}
    for case in suite.cases:
        totals[case.verdict] += 1
    exit_code = suite.exit_code()
    overall = (Verdict.ERROR if exit_code == 2 else Verdict.FAIL if exit_code == 1
               else Verdict.PASS)
    headers = [f"{clean_text(a)} vs expected" if kind == "run"
               else f"{clean_text(a)} vs {clean_text(b)}" for kind, a, b in columns]
    return {
        "title": f"Conformance: {len(suite.cases)} cases, "
                 f"{totals[Verdict.FAIL]} failed, {totals[Verdict.ERROR]} errors",
        "overall": badge(overall),
        "exit_code": exit_code,
        "n_cases": len(suite.cases),
        "totals": [(badge(v), totals[v]) for v in VERDICT_ORDER],
        "started": clean_text(suite.started),
        "elapsed": _elapsed(suite.elapsed) or "0 s",
        "engines": [clean_text(e) for e in suite.engines],
        "command": clean_text(suite.command),
        "environment": _metadata(suite.environment),
        "headers": headers,
        "cases": views,
        "results_href": safe_href("results.json"),
        "junit_href": safe_href("junit.xml"),
    }


def environment() -> jinja2.Environment:
    """The report's jinja2 environment: every substitution autoescaped, undefined names
    an error (a template typo fails the render rather than showing nothing)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(suite: SuiteResult, link_base: str = "") -> str:
    """The report page for ``suite``; raw-output links are ``link_base``/path."""
    return environment().get_template("report.html.j2").render(**build_view(suite, link_base))
