"""The report directory: results.json round trip, the HTML page (escaping, matrix,
details, links, determinism) and JUnit XML, rendered from results.json alone."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.model import (
    CaseResult,
    DiffCounts,
    DiffResult,
    DiffRow,
    EngineRun,
    PairResult,
    SemanticClass,
    SuiteResult,
    Verdict,
)
from conformance.report import (
    REPORT_FILES,
    ResultsFileError,
    read_results,
    render_report,
    write_report,
)

pytestmark = pytest.mark.timeout(60)

HOSTILE = "<script>alert(1)</script>"
HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">'
LONG = "x" * 400


def _diff(left, right, observed, samples=(), comparison="rows", **counts):
    base = {"rows_left": 4, "rows_right": 4, "distinct_left": 3, "distinct_right": 3}
    base.update(counts)
    return DiffResult(left=left, right=right, observed=observed, counts=DiffCounts(**base),
                      samples=list(samples), comparison=comparison,
                      notes=["floats rounded to 12 significant digits"])


def _run(engine, verdict=Verdict.PASS, diff=None, reason="", outputs=None, **kw):
    return EngineRun(engine=engine, run_id=f"{engine}-20240101-1", verdict=verdict,
                     elapsed=1.25, reason=reason,
                     command=f"heron-conformance run --engines {engine} --cases word-count",
                     outputs=[f"captures/word-count/{engine}.jsonl"] if outputs is None
                     else outputs,
                     diff=diff, metadata={"parallelism": 2, "seed": 7, "mode": "clean"}, **kw)


def sample_suite() -> SuiteResult:
    """Every verdict, both comparison kinds, hostile names and values."""
    exact = SemanticClass.EXACT
    word_count = CaseResult(
        case="word-count", description="Words counted per word.", allowed=exact,
        tags=["fields", "acking"],
        runs=[_run("storm", diff=_diff("expected", "storm", exact)),
              _run("heron", diff=_diff("expected", "heron", exact))],
        pairs=[PairResult("storm", "heron", Verdict.PASS,
                          diff=_diff("storm", "heron", exact))])
    hostile_rows = [
        DiffRow(["count", "default", HOSTILE, 1], 1, 0),
        DiffRow(["count", "default", HOSTILE_IMG, None], 0, 2),
        DiffRow(["count", "default", LONG, {"k": [1.5, "é"]}], 2, 3),
    ]
    hostile = CaseResult(
        case=f"replay-{HOSTILE}", description=f"Values like {HOSTILE_IMG} must stay text.",
        allowed=exact, tags=[HOSTILE],
        runs=[_run("storm", diff=_diff("expected", "storm", exact)),
              _run("heron", Verdict.FAIL,
                   diff=_diff("expected", "heron", SemanticClass.DIVERGENT, hostile_rows,
                              missing=1, duplicate_extras=1, novel_extras=2, differing=3,
                              rows_right=6),
                   reason="\x1b[31mred ANSI\x1b[0m and a bell\x07",
                   outputs=["captures/replay/heron.jsonl", "javascript:alert(1)",
                            "captures/odd name#1.jsonl"])],
        pairs=[PairResult("storm", "heron", Verdict.FAIL,
                          diff=_diff("storm", "heron", SemanticClass.DIVERGENT, hostile_rows,
                                     missing=1, novel_extras=2, differing=3))])
    per_key = CaseResult(
        case="running-totals", description="Final count per key.",
        allowed=SemanticClass.AT_LEAST_ONCE, tags=["per-key"],
        runs=[_run("storm", diff=_diff("expected", "storm", exact, comparison="per_key")),
              _run("heron", diff=_diff(
                  "expected", "heron", SemanticClass.AT_LEAST_ONCE,
                  [DiffRow(["count", "default", "w", 3], 1, 2)], comparison="per_key",
                  duplicate_extras=1, differing=1))],
        pairs=[])
    skipped = CaseResult(
        case="direct-grouping", description="", allowed=exact, tags=[],
        runs=[_run("storm", diff=_diff("expected", "storm", exact)),
              _run("heron", Verdict.SKIPPED, reason="engine heron lacks capability 'direct'",
                   outputs=[])],
        pairs=[])
    known = CaseResult(
        case="local-or-shuffle", description="Locality.", allowed=exact, tags=["sickbay"],
        runs=[_run("storm", diff=_diff("expected", "storm", exact)),
              _run("heron", Verdict.KNOWN_FAILURE, reason="issue 42: locality not kept")],
        pairs=[])
    error = CaseResult(
        case="broken", description="A topology that cannot start.", allowed=exact, tags=[],
        runs=[_run("storm", Verdict.ERROR,
                   reason="Traceback (most recent call last):\n  File \"x.py\", line 1\n"
                          "RuntimeError: engine crashed", outputs=[])],
        pairs=[])
    repeat = CaseResult(
        case="word-count", description="Words counted per word.", allowed=exact,
        tags=["fields"], repeat=1,
        runs=[_run("storm", diff=_diff("expected", "storm", exact))], pairs=[])
    return SuiteResult(
        started="2024-01-01T00:00:00Z", elapsed=75.5, engines=["storm", "heron"],
        command="heron-conformance run --engines storm,heron --report out",
        cases=[word_count, hostile, per_key, skipped, known, error, repeat],
        environment={"python": "3.11.7", "pyspark": "4.3.0", "note": HOSTILE})


class PageParser(HTMLParser):
    """Tags, attributes, ids and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if attrs.get("id"):
            self.ids.add(attrs["id"])

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> PageParser:
    page = PageParser()
    page.feed(html)
    page.close()
    return page


@pytest.fixture
def report(tmp_path):
    suite = sample_suite()
    paths = write_report(suite, tmp_path / "report")
    return suite, paths


def test_write_report_writes_the_three_files(report, tmp_path):
    _, paths = report
    assert set(paths) == {"html", "json", "junit"}
    for key, name in REPORT_FILES.items():
        assert paths[key] == tmp_path / "report" / name
        assert paths[key].stat().st_size > 0
    # atomic writes leave no temporary files behind
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == sorted(
        REPORT_FILES.values())


def test_results_json_round_trips(report):
    suite, paths = report
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["format"] == 1
    assert [c["verdict"] for c in data["cases"]] == [
        "pass", "fail", "pass", "skipped", "known failure", "error", "pass"]
    back = read_results(paths["json"])
    assert back.to_json() == suite.to_json()


def test_rendering_is_deterministic_and_reads_only_results_json(report, tmp_path):
    _, paths = report
    first = paths["html"].read_bytes(), paths["junit"].read_bytes()
    again = render_report(paths["json"], paths["json"].parent)
    assert (again["html"].read_bytes(), again["junit"].read_bytes()) == first


def test_render_elsewhere_copies_results_and_relinks_outputs(report, tmp_path):
    _, paths = report
    other = render_report(paths["json"], tmp_path / "elsewhere" / "deeper")
    assert other["json"].read_text() == paths["json"].read_text()
    hrefs = {a.get("href") for tag, a in parse(other["html"].read_text()).tags if tag == "a"}
    assert "../../report/captures/replay/heron.jsonl" in hrefs
    assert "results.json" in hrefs


def test_hostile_values_are_escaped_text(report):
    _, paths = report
    html = paths["html"].read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert "<img" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    page = parse(html)
    text = "".join(page.text)
    assert HOSTILE in text            # shown, as text
    assert "window.__pwned=1" in text
    assert not any(tag in ("script", "img", "iframe", "object") for tag, _ in page.tags)
    assert not any(k.startswith("on") for _, attrs in page.tags for k in attrs)


def test_page_is_self_contained(report):
    _, paths = report
    html = paths["html"].read_text(encoding="utf-8")
    page = parse(html)
    for tag, attrs in page.tags:
        for key in ("src", "href"):
            url = attrs.get(key) or ""
            assert not re.match(r"[a-z][a-z0-9+.-]*:", url) or url.startswith(
                ("data:", "file:")), (tag, url)
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
    assert "Content-Security-Policy" in html
    # every in-page link lands on an id
    for tag, attrs in page.tags:
        href = attrs.get("href") or ""
        if tag == "a" and href.startswith("#"):
            assert href[1:] in page.ids, href


def test_unsafe_output_paths_are_not_links(report):
    _, paths = report
    page = parse(paths["html"].read_text(encoding="utf-8"))
    hrefs = [a.get("href") or "" for tag, a in page.tags if tag == "a"]
    assert not any("javascript" in h for h in hrefs)
    assert "captures/replay/heron.jsonl" in hrefs
    assert "captures/odd%20name%231.jsonl" in hrefs
    assert "javascript:alert(1)" in "".join(page.text)


def test_summary_and_matrix(report):
    _, paths = report
    page = parse(paths["html"].read_text(encoding="utf-8"))
    text = re.sub(r"\s+", " ", " ".join(page.text))
    assert "7 cases" in text
    for label, n in (("pass", 3), ("fail", 1), ("error", 1), ("skipped", 1),
                     ("known failure", 1)):
        assert re.search(rf"{label} {n}\b", text), label
    for header in ("storm vs expected", "heron vs expected", "storm vs heron"):
        assert header in text
    assert "exit code 2" in text
    assert "1 min 16 s" in text  # wall time


def _section(html: str, anchor_prefix: str) -> str:
    start = html.index(f'id="{anchor_prefix}')
    end = html.find("<article", start)
    return html[start:end if end != -1 else len(html)]


def test_case_details(report):
    _, paths = report
    html = paths["html"].read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", " ".join(parse(html).text))
    # the reproduce command, copyable
    assert '<pre class="cmd"><code>heron-conformance run --engines heron --cases word-count' \
        in html
    # counts and the differing rows with left/right counts
    assert "observed: divergent" in text and "allowed: exact" in text
    assert "outside the allowed class" in text
    assert "first 3 of 3 differing rows" in text
    assert "-1 missing" in text and "+2 novel" in text and "+1 duplicate" in text
    # a long value folds, the full value is still there
    assert "<details><summary>[&#34;" + "x" * 158 + "\u2026</summary>" in html
    assert LONG in html
    # reasons: skipped, known failure, error, with ANSI codes removed
    assert "engine heron lacks capability &#39;direct&#39;" in html
    assert "issue 42: locality not kept" in text
    assert "RuntimeError: engine crashed" in text
    assert "red ANSI" in text and "\x1b" not in html and "\\x07" in text
    # per-key comparisons say so, and name their columns
    assert "compared as final value per key" in text
    assert "<th scope=\"col\">final value</th>" in html
    # metadata and canonicalisation notes
    assert "parallelism" in text and "floats rounded to 12 significant digits" in text
    assert "(repeat 1)" in text


def test_matrix_cells_carry_text_not_only_colour(report):
    _, paths = report
    html = paths["html"].read_text(encoding="utf-8")
    cells = re.findall(r'<a class="badge (\w+)" href="#[^"]+">([^<]+)</a>', html)
    assert cells
    for css, text in cells:
        assert css.replace("known", "known failure") in text


def test_empty_suite_renders(tmp_path):
    suite = SuiteResult(started="2024-01-01T00:00:00Z", elapsed=0.0, engines=["storm"],
                        command="heron-conformance run", cases=[])
    paths = write_report(suite, tmp_path)
    assert "No cases were run." in paths["html"].read_text()
    root = ET.parse(paths["junit"]).getroot()
    assert root.get("tests") == "0"


def test_junit_xml(report):
    _, paths = report
    root = ET.parse(paths["junit"]).getroot()  # parses: control characters were removed
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    # 2+2+2+2+2+1+1 runs and 2 pairs
    assert (root.get("tests"), root.get("failures"), root.get("errors"),
            root.get("skipped")) == (str(len(cases)), "2", "1", "2")
    assert len(cases) == 14
    by_name = {(c.get("classname"), c.get("name")): c for c in cases}
    failing = by_name[(f"conformance.replay-{HOSTILE}", "heron vs expected")]
    failure = failing.find("failure")
    assert failure.get("message") == "observed divergent, allowed exact"
    assert HOSTILE in failure.text and "missing=1" in failure.text
    assert "\x1b" not in failure.text
    assert by_name[(f"conformance.replay-{HOSTILE}", "storm vs heron")].find("failure") \
        is not None
    skipped = by_name[("conformance.direct-grouping", "heron vs expected")].find("skipped")
    assert skipped.get("type") == "capability" and "direct" in skipped.get("message")
    known = by_name[("conformance.local-or-shuffle", "heron vs expected")].find("skipped")
    assert known.get("type") == "known-failure"
    assert known.get("message") == "known failure: issue 42: locality not kept"
    error = by_name[("conformance.broken", "storm vs expected")].find("error")
    assert "RuntimeError" in error.text
    out = by_name[("conformance.word-count", "storm vs expected")].find("system-out").text
    assert "reproduce: heron-conformance run --engines storm" in out
    assert ("conformance.word-count[repeat 1]", "storm vs expected") in by_name
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["engines"] == "storm,heron" and props["environment.note"] == HOSTILE


def test_read_results_errors_name_the_file(tmp_path):
    with pytest.raises(ResultsFileError, match="no such results file"):
        read_results(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ResultsFileError, match="bad.json: not a JSON results file"):
        read_results(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": 99, "cases": []}))
    with pytest.raises(ResultsFileError, match="format 99"):
        read_results(other)


def test_non_finite_metadata_still_writes_strict_json(tmp_path):
    suite = sample_suite()
    suite.cases[0].runs[0].metadata["throughput"] = float("nan")
    paths = write_report(suite, tmp_path)
    text = paths["json"].read_text()
    assert "NaN" not in text.replace('"nan"', "")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))


def test_report_from_the_real_differ_output(spark, tmp_path):
    """A DiffResult straight from the differ renders (a smoke test of the seam)."""
    from conformance.diff import diff_outputs
    from conformance.model import Comparison

    def rec(*values):
        return {"component": "count", "stream": "default", "values": list(values)}

    diff = diff_outputs(spark, [rec("a", 1), rec(HOSTILE, 2)], [rec("a", 1), rec("a", 1)],
                        Comparison(), left="expected", right="heron")
    case = CaseResult(case="seam", description="", allowed=SemanticClass.EXACT, tags=[],
                      runs=[EngineRun("heron", "r1", Verdict.FAIL, diff=diff)], pairs=[])
    suite = SuiteResult(started="", elapsed=1.0, engines=["heron"], command="", cases=[case])
    html = write_report(suite, tmp_path)["html"].read_text()
    assert "&lt;script&gt;" in html and "<script>" not in html


# a helper other report tests (the browser test) build on
__all__ = ["HOSTILE", "HOSTILE_IMG", "parse", "sample_suite"]


def test_sample_paths_are_relative_to_the_report(report):
    suite, _ = report
    for case in suite.cases:
        for run in case.runs:
            for out in run.outputs:
                assert not Path(out).is_absolute()
