"""``heron metrics``'s table from the Topology Master's answer (canned here): stale
figures counted and listed with their age; a terminal narrower than the table told that
``--json`` has every figure; piped output never cut."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from rich.console import Console

from engine.tools.cli import metrics_command
from engine.tools.cli.main import main

ANSWER = {
    ("count", "container_1_count_1"): {"__execute-count": "90", "__report-age": "1"},
    ("count", "container_2_count_2"): {"__execute-count": "40", "__report-age": "17"},
    ("split", "container_1_split_3"): {"__emit-count": "300", "__report-age": "0"},
}


@pytest.fixture
def answer(monkeypatch):
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: dict(ANSWER))


def test_stale_instances_are_counted_and_listed_with_their_age(answer):
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert result.exit_code == 0, result.output
    (count_row,) = [line for line in result.output.splitlines() if line.startswith("│ count")]
    assert count_row.rstrip(" │").endswith("1")          # the stale column: one of two
    assert "stale container_2_count_2: last reported 17 s ago" in result.output
    assert "container_1_count_1: last reported" not in result.output
    assert "--json" not in result.output                   # piped: nothing was cut


def test_a_narrow_terminal_is_told_where_every_figure_is(answer, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(metrics_command, "make_console", lambda: Console(
        file=screen, force_terminal=True, width=80, color_system=None))
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert result.exit_code == 0, result.output
    shown = " ".join(screen.getvalue().split())
    assert "columns are squeezed: `heron metrics wordcount --json` has every figure" in shown


def test_an_effectively_once_topologys_checkpoints_and_state_per_task_are_shown(monkeypatch):
    figures = dict(ANSWER)
    figures[("__tmanager__", "heron-tmanager")] = {
        "__checkpoints-completed": "12", "__checkpoints-abandoned": "2",
        "__checkpoint-last-id": "ckpt-1795737913309", "__checkpoint-last-duration-ms": "14",
        "__checkpoint-last-bytes": "2290", "__restores": "3",
        "__restore-last-checkpoint": "ckpt-1795737903309",
        "__restore-last-reason": "task 2 failed: RuntimeError: boom",
        "__rescale-last": '{"count": [2, 5, 77]}'}
    figures[("count", "container_1_count_1")] = {
        **ANSWER[("count", "container_1_count_1")], "__checkpoint-saves": "12",
        "__checkpoint-bytes": "1130", "__checkpoint-save-ms": "1.5", "__restores": "3",
        "__restore-ms": "0.9", "__keyed-keys": "12000", "__key-groups-owned": "26"}
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: figures)
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert ("checkpoints: 12 completed, 2 abandoned; the last, ckpt-1795737913309, took 14 ms "
            "for 2,290 bytes; 3 restore(s), the last to ckpt-1795737903309 (task 2 failed: "
            "RuntimeError: boom)") in text
    (row,) = [line for line in result.output.splitlines() if "container_1_count_1" in line
              and "1,130" in line]
    assert [cell.strip() for cell in row.split("│")[2:9]] == ["1,130", "12,000", "26", "1.5",
                                                               "12", "3", "0.9"]
    assert "last resize of count: 2 -> 5 tasks, 77 key group(s) moved with their state" in text


def test_other_topologies_show_no_checkpoint_section(answer):
    result = CliRunner().invoke(main, ["metrics", "wordcount"])
    assert "checkpoints:" not in result.output and "checkpointed state" not in result.output
