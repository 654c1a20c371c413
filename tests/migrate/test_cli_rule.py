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


def scripts_project(root: Path) -> Path:
    """scripts/run.sh, bin/deploy (a bash shebang, no suffix), ops/Makefile and ops/x.mk
    calling sparse run; a Python shebang file, a text file and scripts in noise folders
    (.git, venv, node_modules, logs) saying the same, which must be left alone."""
    for folder in ("scripts", "bin", "ops", ".git/hooks", "venv/bin", "node_modules/x", "logs"):
        (root / folder).mkdir(parents=True)
    (root / "scripts" / "run.sh").write_text("#!/bin/sh\nsparse run -n wc\n")
    (root / "bin" / "deploy").write_text("#!/usr/bin/env bash\nset -e\nsparse run -n wc\n")
    (root / "bin" / "zdeploy").write_text("#!/bin/zsh\nsparse kill -n wc\n")
    (root / "ops" / "Makefile").write_text("run:\n\tsparse run -n wc\n")
    (root / "ops" / "rules.mk").write_text("up:\n\tsparse list\n")
    (root / "bin" / "tool").write_text("#!/usr/bin/env python3\nprint('sparse run -n wc')\n")
    (root / "bin" / "notes").write_text("call sparse run -n wc by hand\n")
    (root / "NOTES.txt").write_text("sparse run -n wc\n")
    for noise in (".git/hooks/pre-push", "venv/bin/run.sh", "node_modules/x/run.sh",
                  "logs/run.sh"):
        (root / noise).write_text("#!/bin/sh\nsparse run -n wc\n")
    return root


def test_scripts_anywhere_in_the_project_are_found_noise_skipped(tmp_path: Path) -> None:
    outcomes = SparseCommandsRule().apply(scripts_project(tmp_path))
    changed = {str(o.path.relative_to(tmp_path)): o.migrated for o in outcomes}
    assert changed == {
        "bin/deploy": "#!/usr/bin/env bash\nset -e\nheron run -n wc\n",
        "bin/zdeploy": "#!/bin/zsh\nheron kill wc\n",
        "ops/Makefile": "run:\n\theron run -n wc\n",
        "ops/rules.mk": "up:\n\theron list\n",
        "scripts/run.sh": "#!/bin/sh\nheron run -n wc\n",
    }
    assert [f.path for o in outcomes for f in o.findings] == sorted(changed)


def test_shebang_detection(tmp_path: Path) -> None:
    from migrate.rules.sparse_commands import _shebang_shell

    cases = {"#!/bin/sh\n": True, "#!/bin/bash -e\n": True, "#! /usr/bin/dash\n": True,
             "#!/usr/bin/env -S bash -e\n": True, "#!/usr/bin/env LC_ALL=C zsh\n": True,
             "#!/usr/bin/env python3\n": False, "#!/bin/shx\n": False, "echo sh\n": False,
             "": False}
    found = {}
    for number, first_line in enumerate(cases):
        path = tmp_path / f"script{number}"
        path.write_text(first_line + "sparse run\n")
        found[first_line] = _shebang_shell(path)
    assert found == cases


def test_a_symlinked_script_is_reported_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "ops"
    outside.mkdir()
    (outside / "deploy.sh").write_text("sparse run -n wc\n")
    project = tmp_path / "project"
    (project / "bin").mkdir(parents=True)
    (project / "bin" / "deploy.sh").symlink_to(outside / "deploy.sh")
    (outcome,) = SparseCommandsRule().apply(project)
    assert outcome.status is Status.UNCHANGED
    (finding,) = outcome.findings
    assert finding.level is Level.WARNING and finding.path == "bin/deploy.sh"
    assert finding.message.startswith(
        f"symlinked script not followed: bin/deploy.sh -> {outside / 'deploy.sh'}")
    assert (outside / "deploy.sh").read_text() == "sparse run -n wc\n"  # target untouched
    assert (project / "bin" / "deploy.sh").is_symlink()
