"""The documentation stays true to the repository it describes: a reader who follows a
link must find the file (and the heading it points to), a reader who copies a ``heron
COMMAND`` line must get a command that exists, and a reader who copies ``heron logs
wordcount COMPONENT`` or ``heron metrics wordcount COMPONENT`` must not get "no such
component". The README is a front page and the reference lives in docs/, so these checks
are what keeps the moved reference honest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.common.submission import load_topology

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
EXAMPLE = re.compile(r"heron (?:logs|metrics) wordcount ([A-Za-z_][\w-]*)")

#: ``[text](target)``; an image's ``![alt](target)`` too
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: a docs page named in prose, as the docs often do: "(docs/kafka.md)"
PROSE_PAGE = re.compile(r"(?<![\w/.-])docs/([\w.-]+\.md)\b")
FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
INDENTED_CODE = re.compile(r"^(?: {4}|\t)(.+)$", re.M)
#: ``heron COMMAND`` where a command starts (a line, a code span, after ``&&``, ``;``,
#: ``|``, ``$(``): not ``heron-migrate``, ``heron.yaml``, ``--engine heron`` or prose
HERON_COMMAND = re.compile(r"(?:^|&&|;|\||\$\(|\$ )\s*heron ([a-z][\w-]*)", re.M)
#: ``heron WORD`` a page shows that is output, not a command: the conformance runner's
#: live line reads "heron vs storm: stage 7: ..."
NOT_COMMANDS = {"vs"}

pytestmark = pytest.mark.timeout(60)


def _doc_name(doc: Path) -> str:
    return doc.relative_to(REPO).as_posix()


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"`|\*", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    """Every heading's anchor in ``doc``, with GitHub's -1, -2 suffixes for repeats."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in FENCE.sub("", doc.read_text()).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _code(text: str) -> list[str]:
    """The parts of a page a reader copies: fenced and indented blocks, inline code."""
    fenced = [block.group(0) for block in FENCE.finditer(text)]
    prose = FENCE.sub("", text)
    return [*fenced, *INDENTED_CODE.findall(prose), *INLINE_CODE.findall(prose)]


def test_every_component_the_docs_name_for_the_word_count_exists(isolated_imports):
    from engine.tools.cli.logs_command import PROCESS_KINDS, SINGLE_PROCESSES

    # `heron logs` also names the engine's processes by kind (stmgr, executor...)
    components = set(load_topology(REPO / "examples" / "wordcount",
                                   name="wordcount").plan.components)
    components |= {*PROCESS_KINDS, *SINGLE_PROCESSES}
    named = {(doc.relative_to(REPO).as_posix(), match.group(1))
             for doc in DOCS for match in EXAMPLE.finditer(doc.read_text())}
    assert named, "no `heron logs|metrics wordcount COMPONENT` example found to check"
    unknown = sorted((doc, name) for doc, name in named if name not in components)
    assert unknown == [], f"examples naming components the word count lacks {components}"


def test_every_relative_link_in_the_docs_reaches_a_file_and_heading():
    broken = []
    checked = 0
    for doc in DOCS:
        text = FENCE.sub("", doc.read_text())
        for target in LINK.findall(text):
            if re.match(r"[a-z][\w+.-]*:", target):   # https:, mailto:...
                continue
            path, _, anchor = target.partition("#")
            page = (doc.parent / path).resolve() if path else doc
            checked += 1
            if not page.exists():
                broken.append((_doc_name(doc), target, "no such file"))
            elif anchor and page.suffix == ".md" and anchor not in _anchors(page):
                broken.append((_doc_name(doc), target,
                               f"no heading with anchor #{anchor} in {_doc_name(page)}"))
        for name in PROSE_PAGE.findall(text):
            checked += 1
            if not (REPO / "docs" / name).exists():
                broken.append((_doc_name(doc), f"docs/{name}", "no such page"))
    assert checked, "no relative link found to check"
    assert broken == [], "links to nothing (page, target, why)"


def test_every_heron_command_the_docs_show_exists(isolated_imports):
    from engine.tools.cli.main import main as heron

    commands = set(heron.commands)
    shown = {(_doc_name(doc), match.group(1))
             for doc in DOCS for code in _code(doc.read_text())
             for match in HERON_COMMAND.finditer(code)}
    assert {name for _, name in shown} >= {"run", "submit", "tracker"}, shown
    unknown = sorted((doc, name) for doc, name in shown
                     if name not in commands | NOT_COMMANDS)
    assert unknown == [], f"`heron COMMAND` examples naming no command of {sorted(commands)}"
