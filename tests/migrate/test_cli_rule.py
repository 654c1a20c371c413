"""The ``cli`` rule: exact ``sparse run`` calls become ``heron run``; the rest is reported."""

from __future__ import annotations

from pathlib import Path

from migrate.findings import Level
from migrate.outcome import Status
from migrate.rules.sparse_commands import SparseCommandsRule


def test_exact_sparse_run_in_script_becomes_heron_run(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\nsparse run -n wc -o a=1 -d --time 5 && echo ok\n")
    [outcome] = SparseCommandsRule().apply(tmp_path)
    assert outcome.status is Status.CHANGED
    assert outcome.migrated == "#!/bin/sh\nheron run -n wc -o a=1 -d --time 5 && echo ok\n"
    assert [(f.line, f.level) for f in outcome.findings] == [(2, Level.INFO)]


def test_makefile_run_is_rewritten_and_idempotent(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("run:\n\tsparse run -t 10\n")
    [outcome] = SparseCommandsRule().apply(tmp_path)
    (tmp_path / "Makefile").write_text(outcome.migrated)
    assert SparseCommandsRule().apply(tmp_path) == []


def test_submit_and_unknown_run_options_are_reported_not_rewritten(tmp_path: Path) -> None:
    text = "sparse submit -e prod\nsparse run --local_port 3\nsparse tail\n"
    (tmp_path / "deploy.sh").write_text(text)
    [outcome] = SparseCommandsRule().apply(tmp_path)
    assert outcome.status is Status.UNCHANGED and outcome.migrated == text
    assert [(f.line, f.level, f.message) for f in outcome.findings] == [
        (1, Level.WARNING, "sparse submit has no exact heron equivalent"),
        (2, Level.WARNING, "sparse run has no exact heron equivalent"),
        (3, Level.WARNING, "sparse tail has no exact heron equivalent"),
    ]


def test_fabfile_hooks_and_sparse_strings_are_reported(tmp_path: Path) -> None:
    (tmp_path / "fabfile.py").write_text(
        'def pre_submit(t, e, c, o):\n    """Doc."""\n    pass\n\n\n'
        'def post_submit(t, e, c, o):\n    notify(t)\n\n\n'
        'def deploy():\n    local("sparse submit -e prod")\n')
    [outcome] = SparseCommandsRule().apply(tmp_path)
    assert outcome.status is Status.UNCHANGED
    assert [(f.line, f.level, f.message) for f in outcome.findings] == [
        (1, Level.INFO, "pre_submit hook is not called here"),
        (6, Level.WARNING, "post_submit hook is not called here"),
        (11, Level.WARNING, "sparse submit called from Python"),
    ]


def test_words_containing_sparse_are_not_commands(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("echo sparsely run\n./bin/sparse-run x\nmysparse run\n")
    assert SparseCommandsRule().apply(tmp_path) == []


def test_kill_and_list_with_exact_equivalents_are_rewritten(tmp_path):
    from migrate.rules.sparse_commands import SparseCommandsRule

    script = tmp_path / "ops.sh"
    script.write_text("sparse kill -n wordcount --wait 5\nsparse list\n"
                      "sparse kill -e prod -n wordcount\nsparse kill\n")
    (outcome,) = SparseCommandsRule().apply(tmp_path)
    assert outcome.migrated.splitlines() == [
        "heron kill wordcount --wait 5", "heron list",
        "sparse kill -e prod -n wordcount", "sparse kill"]
    messages = [(f.line, f.level, f.message) for f in outcome.findings]
    assert messages == [
        (1, Level.INFO, "sparse kill became heron kill"),
        (2, Level.INFO, "sparse list became heron list"),
        (3, Level.WARNING, "sparse kill has no exact heron equivalent"),
        (4, Level.WARNING, "sparse kill has no exact heron equivalent"),
    ]
