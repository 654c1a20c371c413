"""The word-count bench's CPU per word in full flow: the CPU each process kind spent
between a fifth and four fifths of the words counted, per word counted there, so start-up
(imports, the vocabulary) and the drain do not weigh on the per-word figure."""

from __future__ import annotations

from bench.wordcount_figures import KindFigures, steady_cpu
from bench.wordcount_report import kinds_table


def test_full_flow_cpu_leaves_start_up_and_drain_out():
    marks = [(0, {"spout": 2.0}),                        # start-up: 2 s before any word
             (200_000, {"spout": 2.3, "bolt": 0.1}),
             (500_000, {"spout": 2.75, "bolt": 0.4}),
             (800_000, {"spout": 3.2, "bolt": 0.7}),
             (1_000_000, {"spout": 5.0, "bolt": 0.8})]   # the drain
    steady = steady_cpu(marks, 1_000_000)
    assert round(steady["spout"], 6) == 1.5 and round(steady["bolt"], 6) == 1.0
    # a run too short to have two marks in full flow has no such figure
    assert steady_cpu(marks[:2], 1_000_000) == {}


def test_the_kinds_table_shows_the_full_flow_column():
    kinds = [KindFigures("spout", 1, 50.0, 50.0, 5.0, steady_us_per_word=1.5),
             KindFigures("bolt", 2, 60.0, 120.0, 0.8, steady_us_per_word=None)]
    table = kinds_table("t", kinds, 1_000_000)
    cells = [list(column.cells) for column in table.columns]
    assert cells[-1] == ["1.50", "-", "-"]
