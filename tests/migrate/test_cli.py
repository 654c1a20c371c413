"""The ``heron-migrate`` command: modes, exit codes, and files it must never touch."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from migrate.cli import command
from tests.migrate.tree_snapshot import snapshot

OLD = "from streamparse import Bolt  # base\n\n\nclass B(Bolt):\n    pass\n"
NEW = "from compat.storm_api import Bolt  # base\n\n\nclass B(Bolt):\n    pass\n"


def run(*args: str):
    return CliRunner().invoke(command, [str(a) for a in args])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "bolt.py").write_text(OLD)
    (tmp_path / "src" / "plain.py").write_text("import os\n")
    return tmp_path


def test_default_mode_prints_diff_writes_nothing_and_exits_1(project: Path) -> None:
    result = run(project)
    assert result.exit_code == 1
    assert "-from streamparse import Bolt  # base" in result.stdout
    assert "+from compat.storm_api import Bolt  # base" in result.stdout
    assert "--- a/src/bolt.py" in result.stdout
    assert (project / "src" / "bolt.py").read_text() == OLD


def test_check_exits_1_when_needed_and_0_after_write(project: Path) -> None:
    assert run("--check", project).exit_code == 1
    assert (project / "src" / "bolt.py").read_text() == OLD
    assert run("--write", project).exit_code == 0
    assert run("--check", project).exit_code == 0
    assert run(project).stdout == ""


def test_write_rewrites_in_place_keeping_mode(project: Path) -> None:
    target = project / "src" / "bolt.py"
    os.chmod(target, 0o750)
    assert run("--write", project).exit_code == 0
    assert target.read_text() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert sorted(p.name for p in target.parent.iterdir()) == ["bolt.py", "plain.py"]


def test_single_file_path_is_accepted(project: Path) -> None:
    target = project / "src" / "bolt.py"
    assert run("--write", target).exit_code == 0
    assert target.read_text() == NEW


def test_syntax_error_file_is_untouched_listed_and_exits_2(project: Path) -> None:
    broken = project / "src" / "broken.py"
    broken.write_text("from streamparse import Bolt\ndef f(:\n")
    result = run("--write", project)
    assert result.exit_code == 2
    assert "failed: src/broken.py:2:" in result.output
    assert broken.read_text() == "from streamparse import Bolt\ndef f(:\n"
    assert (project / "src" / "bolt.py").read_text() == NEW  # the others are still migrated


def test_python2_file_gets_a_python2_hint(project: Path) -> None:
    old = project / "src" / "old.py"
    old.write_text("from streamparse import Bolt\nprint 'hello'\n")
    result = run("--check", project)
    assert result.exit_code == 2
    assert "hint: looks like Python 2" in result.output
    assert old.read_text() == "from streamparse import Bolt\nprint 'hello'\n"


def test_non_utf8_file_is_reported_not_touched(project: Path) -> None:
    latin = project / "src" / "latin.py"
    data = "from streamparse import Bolt\n# caf\xe9\n".encode("latin-1")
    latin.write_bytes(data)
    result = run("--write", project)
    assert result.exit_code == 2
    assert "failed: src/latin.py: not UTF-8 (byte 34)" in result.output
    assert latin.read_bytes() == data


def test_list_rules_shows_ids_and_descriptions() -> None:
    result = run("--list-rules")
    assert result.exit_code == 0
    assert result.stdout.startswith("imports\t")


def test_skip_and_only_select_rules(project: Path) -> None:
    assert run("--check", "--skip", "imports", project).exit_code == 0
    assert run("--check", "--only", "imports", project).exit_code == 1


def test_unknown_rule_id_is_a_usage_error(project: Path) -> None:
    result = run("--only", "nope", project)
    assert result.exit_code == 2
    assert "unknown rule id(s): nope" in result.output


def test_error_findings_are_printed_with_location(project: Path) -> None:
    (project / "src" / "cli_use.py").write_text("import os\nimport streamparse.cli\n")
    result = run("--check", project)
    assert result.exit_code == 1
    assert "src/cli_use.py:2:1: ERROR [imports] no compat.storm_api module for streamparse.cli" \
        in result.output


def test_symlinked_file_is_reported_and_left_a_link(project: Path, tmp_path_factory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "shared.py"
    outside.write_text(OLD)
    link = project / "src" / "shared.py"
    link.symlink_to(outside)
    result = run("--write", project)
    assert result.exit_code == 0
    assert link.is_symlink() and outside.read_text() == OLD
    assert "symlink not followed" in result.output


def test_symlink_loop_in_tree_does_not_hang(project: Path) -> None:
    (project / "src" / "loop").symlink_to(project / "src")
    before = snapshot(project)
    result = run("--check", project)
    assert result.exit_code == 1
    assert (f"src/loop:0:0: WARNING [files] symlinked folder not followed: "
            f"src/loop -> {project / 'src'}; its files are not migrated") in result.output
    assert f"to do: migrate {(project / 'src').resolve()} by hand" in result.output
    assert snapshot(project) == before


def test_symlinked_folder_is_reported_in_console_and_report(tmp_path: Path) -> None:
    project, other = tmp_path / "proj", tmp_path / "other"
    (project / "src").mkdir(parents=True)
    other.mkdir()
    (other / "bolt.py").write_text(OLD)
    (project / "src" / "linked").symlink_to("../../other")
    before, report = snapshot(tmp_path), tmp_path / "report.txt"
    result = run("--write", "--report", report, project)
    assert result.exit_code == 0
    headline = ("src/linked:0:0: WARNING [files] symlinked folder not followed: "
                "src/linked -> ../../other; its files are not migrated")
    to_do = (f"to do: migrate {other.resolve()} by hand, or run heron-migrate on it "
             "separately")
    assert headline in result.output and to_do in result.output
    text = report.read_text()
    assert headline in text and to_do in text
    assert "Detected 1 issues that require attention (0 errors, 1 warnings)." in text
    after = snapshot(tmp_path)
    assert after.pop("report.txt")[0] == "file"
    assert after == before  # nothing under the link (nor anywhere else) was rewritten


def test_unwritable_file_is_a_failure_with_exit_2(project: Path, monkeypatch) -> None:
    def refuse(path: Path, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("migrate.cli.atomic_write", refuse)
    result = run("--write", project)
    assert result.exit_code == 2
    assert "src/bolt.py: cannot write" in result.output
    assert (project / "src" / "bolt.py").read_text() == OLD


def test_crashing_rule_fails_the_file_with_exit_2(project: Path, monkeypatch) -> None:
    from migrate.rules.imports import ImportsRule

    def boom(self, original_node, updated_node):
        raise RuntimeError("boom")

    monkeypatch.setattr(ImportsRule, "leave_ImportFrom", boom)
    result = run("--write", "--debug", project)
    assert result.exit_code == 2
    assert "rule imports crashed: RuntimeError('boom')" in result.output
    assert "Traceback" in result.output
    assert (project / "src" / "bolt.py").read_text() == OLD


def test_java_spec_is_reported_after_imports_are_migrated(project: Path) -> None:
    java = project / "src" / "topo.py"
    java.write_text(
        "from streamparse import JavaBolt\n\nb = JavaBolt.spec(full_class_name='a.B')\n"
    )
    result = run("--write", project)
    assert result.exit_code == 0
    assert java.read_text().startswith("from compat.storm_api import JavaBolt\n")
    assert "src/topo.py:3:5: ERROR [unsupported] Java component spec" in result.output
    assert run("--check", "--only", "unsupported", project).exit_code == 1


def test_unsafe_flag_enables_print_rewrite(project: Path) -> None:
    noisy = project / "src" / "noisy.py"
    noisy.write_text("from streamparse import Bolt\n\n\nclass N(Bolt):\n"
                     "    def process(self, tup):\n        print(tup)\n")
    assert run("--write", project).exit_code == 0
    assert "print(tup)" in noisy.read_text()
    result = run("--write", "--unsafe", project)
    assert result.exit_code == 0
    assert 'self.logger.info("%s", tup)' in noisy.read_text()
    assert "unsafe rewrite" in result.output


@pytest.mark.slow
def test_jobs_gives_the_same_result_as_one_process(project: Path) -> None:
    # A real process: the pool's helper processes (resource tracker) end with it.
    import subprocess
    import sys

    for i in range(3):
        (project / "src" / f"extra{i}.py").write_text(OLD)
    (project / "src" / "broken.py").write_text("def f(:\n")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "migrate.cli", *args, str(project)],
                              capture_output=True, text=True, timeout=60,
                              cwd=Path(__file__).resolve().parents[2])

    serial, parallel = cli("--check"), cli("--check", "--jobs", "2")
    assert serial.returncode == 2
    assert (parallel.returncode, parallel.stdout, parallel.stderr) == \
        (serial.returncode, serial.stdout, serial.stderr)


def test_format_pipes_changed_files_through_the_command(project: Path) -> None:
    import sys

    upper = (
        f"{sys.executable} -c \"import sys; sys.stdout.write(sys.stdin.read() + '# formatted\\n')\""
    )
    assert run("--write", "--format", upper, project).exit_code == 0
    assert (project / "src" / "bolt.py").read_text() == NEW + "# formatted\n"
    assert (project / "src" / "plain.py").read_text() == "import os\n"  # unchanged: not formatted


def test_failing_formatter_fails_the_file_and_leaves_it(project: Path) -> None:
    result = run("--write", "--format", "false", project)
    assert result.exit_code == 2
    assert "--format 'false' exited 1" in result.output
    assert (project / "src" / "bolt.py").read_text() == OLD


def test_unreadable_file_is_reported_and_exit_2(project: Path, monkeypatch) -> None:
    target = project / "src" / "bolt.py"
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self == target:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = run("--write", project)
    assert result.exit_code == 2
    assert "failed: src/bolt.py: cannot read: Permission denied" in result.output
    monkeypatch.undo()
    assert target.read_text() == OLD


def test_scripts_in_subfolders_are_rewritten_in_diff_and_write_modes(project: Path) -> None:
    (project / "scripts").mkdir()
    (project / "bin").mkdir()
    run_sh, deploy = project / "scripts" / "run.sh", project / "bin" / "deploy"
    run_sh.write_text("#!/bin/sh\nsparse run -n wc\n")
    deploy.write_text("#!/usr/bin/env bash\nsparse run -n wc\n")
    (project / "bin" / "notes").write_text("sparse run -n wc\n")  # no shell shebang
    before = snapshot(project)
    result = run("--only", "cli", project)
    assert result.exit_code == 1
    for name in ("scripts/run.sh", "bin/deploy"):
        assert f"--- a/{name}\n+++ b/{name}\n" in result.stdout
    assert result.stdout.count("-sparse run -n wc\n+heron run -n wc\n") == 2
    assert "bin/notes" not in result.output
    assert snapshot(project) == before
    result = run("--write", project)
    assert result.exit_code == 0
    assert "rewrote scripts/run.sh" in result.output and "rewrote bin/deploy" in result.output
    assert run_sh.read_text() == "#!/bin/sh\nheron run -n wc\n"
    assert deploy.read_text() == "#!/usr/bin/env bash\nheron run -n wc\n"
    assert (project / "bin" / "notes").read_text() == "sparse run -n wc\n"
    assert run("--check", project).exit_code == 0


def test_summary_counts_distinct_files_and_new_files_apart(project: Path) -> None:
    (project / "config.json").write_text('{"envs": {}}\n')
    (project / "fabfile.py").write_text("def pre_submit(t, e, c, o):\n    pass\n")
    result = run("--check", project)
    # bolt.py, plain.py, fabfile.py (read by two rules, counted once), config.json
    assert "4 files scanned, 1 to change, 3 unchanged, 0 failed; 1 new files to create" \
        in result.output
    result = run("--write", project)
    assert "4 files scanned, 1 rewritten, 3 unchanged, 0 failed; 1 new files created" \
        in result.output
