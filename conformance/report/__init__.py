"""The conformance report directory: ``results.json`` (the record), ``index.html`` (a
self-contained page people read) and ``junit.xml`` (for CI).

The page and the XML are rendered from ``results.json`` alone, never from Spark or a
live run: :func:`write_report` writes the JSON and renders from it, and
:func:`render_report` re-renders any ``results.json`` later. Every file is written
atomically (a reader sees the old report or the new one).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from conformance.model import SuiteResult
from conformance.report.html import render_html
from conformance.report.junit import junit_xml
from conformance.report.results import (
    ResultsFileError,
    atomic_write_text,
    read_results,
    results_text,
    write_results,
)

__all__ = ["REPORT_FILES", "ResultsFileError", "read_results", "render_report",
           "write_report", "write_results"]

#: what a report directory holds, by key of the dicts returned below
REPORT_FILES = {"html": "index.html", "json": "results.json", "junit": "junit.xml"}


def write_report(suite: SuiteResult, directory: Path) -> dict[str, Path]:
    """Write ``results.json`` for ``suite`` into ``directory`` and render ``index.html``
    and ``junit.xml`` from it. Raw-output paths in the runs are relative to
    ``directory``. Returns ``{"html", "json", "junit"}`` → path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    results = write_results(suite, directory / REPORT_FILES["json"])
    return render_report(results, directory)


def render_report(results_json: Path, directory: Path) -> dict[str, Path]:
    """Render ``index.html`` and ``junit.xml`` into ``directory`` from ``results_json``.

    When ``directory`` is not the results file's own directory, the results are copied
    beside the page (so its ``results.json`` link works) and raw-output links point back
    to where the outputs are, relative to the new directory.
    """
    results_json = Path(results_json)
    directory = Path(directory)
    suite = read_results(results_json)
    directory.mkdir(parents=True, exist_ok=True)
    source_dir = results_json.resolve().parent
    target_dir = directory.resolve()
    json_path = directory / REPORT_FILES["json"]
    if source_dir == target_dir:
        link_base = ""
        if results_json.resolve() != json_path.resolve():
            atomic_write_text(json_path, results_text(suite))
    else:
        link_base = Path(os.path.relpath(source_dir, target_dir)).as_posix()
        link_base = "" if link_base == "." else posixpath.normpath(link_base)
        atomic_write_text(json_path, results_text(suite))
    html = atomic_write_text(directory / REPORT_FILES["html"], render_html(suite, link_base))
    junit = atomic_write_text(directory / REPORT_FILES["junit"], junit_xml(suite))
    return {"html": html, "json": json_path, "junit": junit}
