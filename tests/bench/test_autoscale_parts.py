"""The parts of bench/autoscale.py that need no topology: its chart (a PNG drawn with
matplotlib, decoded back here: the right size, the series' and marks' colours where they
were drawn) and the sink counter (distinct ids, lines being written). The benchmark
itself submits a topology for minutes; it is run by hand (figures in bench/README.md).
Also: ``--topology`` (the default project, or the stateful word count with its own
chart) and the counter of the stateful sink's committed records, with its exactness
check against the corpus."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from bench.autoscale import (
    ROOT,
    STATEFUL_PROJECT,
    CommittedCounter,
    Phase,
    Sample,
    SinkCounter,
    draw,
    moving_average,
    parse_args,
)

BLUE, ORANGE, GREEN, RED = (31, 78, 121), (217, 72, 15), (31, 111, 67), (180, 35, 24)


def decode(path) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """Width, height and RGB rows of a PNG."""
    with Image.open(path) as image:
        assert image.format == "PNG"
        rgb = image.convert("RGB")
        width, height = rgb.size
        pixels = rgb.load()
        return width, height, [[pixels[x, y] for x in range(width)] for y in range(height)]


def colours(rows: list[list[tuple[int, int, int]]]) -> set[tuple[int, int, int]]:
    return {c for r in rows for c in r}


def test_a_chart_draws_each_series_in_its_colour(tmp_path):
    ts = list(range(20))
    samples = [Sample(t=float(t), offered=100.0 if t < 10 else 400.0, counted=0.0,
                      bp_ms=None, parallelism=2 if t < 12 else 3) for t in ts]
    draw(samples, [], [], tmp_path / "chart.png", "test", size=(400, 200))
    width, height, rows = decode(tmp_path / "chart.png")
    assert (width, height) == (400, 200)
    seen = colours(rows)
    assert BLUE in seen and GREEN in seen and (255, 255, 255) in seen
    # the blue line is higher (smaller y) on the right half than on the left
    def blue_ys(x0: int, x1: int) -> list[int]:
        return [y for y, r in enumerate(rows) for x in range(x0, x1)
                if r[x] == BLUE and y < 130]
    assert min(blue_ys(280, 320)) < min(blue_ys(80, 120))


def test_a_chart_marks_the_steps_and_the_applied_actions(tmp_path):
    samples = [Sample(t=100.0 + t, offered=150.0, counted=150.0, bp_ms=None, parallelism=1)
               for t in range(30)]
    actions = [{"time": 115.0, "status": "applied"}, {"time": 120.0, "status": "held"}]
    path = tmp_path / "chart.png"
    draw(samples, [Phase("step up", 110.0)], actions, path, "marks")
    _, _, rows = decode(path)
    # a dashed vertical line: the same colour in many rows of one column
    def columns(colour: tuple[int, int, int]) -> set[int]:
        return {x for x in range(len(rows[0]))
                if sum(1 for r in rows if r[x] == colour) > 60}
    assert len(columns(RED)) >= 1 and len(columns(BLUE)) >= 1
    assert min(columns(BLUE)) < min(columns(RED))  # the step at 10 s, the action at 15 s


def test_moving_average():
    assert moving_average([0, 10, 20, 30], 2) == [0, 5, 15, 25]


def test_the_sink_counter_counts_distinct_ids_and_waits_for_whole_lines(tmp_path):
    counter = SinkCounter(tmp_path)
    assert counter.poll() == 0
    sink = tmp_path / "sink-3.txt"
    sink.write_text("1 w1\n2 w2\n1 w1\n4 w")
    assert counter.poll() == 2  # 1 replayed; "4 w" is still being written
    with open(sink, "a") as fh:
        fh.write("4\n5 w5\n")
    (tmp_path / "sink-4.txt").write_text("5 w5\n6 w6\n")
    assert counter.poll() == 3 and counter.seen == {1, 2, 4, 5, 6}


def test_the_topology_option_chooses_the_project_and_the_default_chart():
    default = parse_args([])
    assert (default.topology, default.target.name, default.target.component) == \
        ("autoscale", "e2e_autoscale", "slow")
    assert default.chart == ROOT / "bench" / "autoscale.png"
    stateful = parse_args(["--topology", "stateful"])
    assert (stateful.target.name, stateful.target.component) == ("keyed_autoscale", "count")
    assert stateful.chart == ROOT / "bench" / "autoscale-stateful.png"
    assert (stateful.target.project / "topologies" / "keyed_autoscale.py").is_file()
    assert parse_args(["--topology", "stateful", "--chart", "/tmp/x.png"]).chart == \
        Path("/tmp/x.png")


def test_the_committed_counter_reads_committed_files_once_and_checks_the_counts(
        tmp_path, monkeypatch, isolated_imports):
    monkeypatch.syspath_prepend(str(STATEFUL_PROJECT / "src"))
    from stateful_autoscale_parts import word

    counter = CommittedCounter(tmp_path)
    assert counter.poll() == 0 and counter.exact()  # nothing committed: the empty prefix
    running: dict[str, int] = {}

    def lines(first: int, last: int) -> str:
        out = []
        for i in range(first, last):
            running[word(i)] = running.get(word(i), 0) + 1
            out.append(json.dumps([word(i), running[word(i)]]))
        return "\n".join(out) + "\n"

    (tmp_path / "part-3-ckpt-1.jsonl").write_text(lines(0, 40))
    (tmp_path / ".part-3-x.inprogress").write_text(lines(40, 45))  # not committed yet
    assert counter.poll() == 40 and counter.exact()
    (tmp_path / "part-3-ckpt-2.jsonl").write_text(lines(45, 60))
    assert counter.poll() == 15 and counter.count == 55
    assert not counter.exact()  # words 40..44 are missing: not a prefix of the corpus
    (tmp_path / "part-3-ckpt-3.jsonl").write_text((tmp_path / "part-3-ckpt-1.jsonl").read_text())
    counter = CommittedCounter(tmp_path)
    counter.poll()
    assert not counter.exact()  # a transaction committed twice
