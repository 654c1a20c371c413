"""The command lines the documentation shows for the example word count name components
the example really has: a reader who copies ``heron logs wordcount COMPONENT`` or
``heron metrics wordcount COMPONENT`` from the docs must not get "no such component"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.submission import load_topology

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
EXAMPLE = re.compile(r"heron (?:logs|metrics) wordcount ([A-Za-z_][\w-]*)")

pytestmark = pytest.mark.timeout(60)


def test_every_component_the_docs_name_for_the_word_count_exists(isolated_imports):
    from engine.cli.logs_command import PROCESS_KINDS, SINGLE_PROCESSES

    # `heron logs` also names the engine's processes by kind (stmgr, executor...)
    components = set(load_topology(REPO / "examples" / "wordcount",
                                   name="wordcount").plan.components)
    components |= {*PROCESS_KINDS, *SINGLE_PROCESSES}
    named = {(doc.relative_to(REPO).as_posix(), match.group(1))
             for doc in DOCS for match in EXAMPLE.finditer(doc.read_text())}
    assert named, "no `heron logs|metrics wordcount COMPONENT` example found to check"
    unknown = sorted((doc, name) for doc, name in named if name not in components)
    assert unknown == [], f"examples naming components the word count lacks {components}"
