"""The parts of bench/autoscale.py that need no topology: the PNG its chart is written
as (decoded back here: valid chunks and CRCs, the series' colours where they were
drawn) and the sink counter (distinct ids, lines being written). The benchmark itself
submits a topology for minutes; it is run by hand (figures in bench/README.md)."""

from __future__ import annotations

import struct
import zlib

from bench.autoscale import SinkCounter, moving_average
from bench.pngchart import Chart, encode_png, nice_max

BLUE, GREEN = (31, 78, 121), (31, 111, 67)


def decode(png: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB rows of an 8-bit RGB PNG whose rows use filter 0."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + data) & 0xFFFFFFFF, kind
        if kind == b"IHDR":
            size = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    width, height, depth, colour, *_ = size
    assert (depth, colour) == (8, 2)
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    rows = [raw[i * stride:(i + 1) * stride] for i in range(height)]
    assert all(r[0] == 0 for r in rows)
    return width, height, [r[1:] for r in rows]


def colours(rows: list[bytes]) -> set[tuple[int, int, int]]:
    return {tuple(r[i:i + 3]) for r in rows for i in range(0, len(r), 3)}


def test_encode_png_round_trips_pixels():
    rows = [bytes([x, y, 7]) * 1 for y in range(3) for x in range(1)]
    width, height, decoded = decode(encode_png(1, 3, rows))
    assert (width, height) == (1, 3) and decoded == rows


def test_a_chart_draws_each_series_in_its_colour():
    chart = Chart(400, 200)
    ts = list(range(20))
    chart.plot(ts, [100.0 if t < 10 else 400.0 for t in ts], BLUE, label="offered/s")
    chart.plot(ts, [2.0 if t < 12 else 3.0 for t in ts], GREEN, axis="right", step=True,
               label="parallelism")
    width, height, rows = decode(chart.render(title="test"))
    assert (width, height) == (400, 200)
    seen = colours(rows)
    assert BLUE in seen and GREEN in seen and (255, 255, 255) in seen
    # the blue line is higher (smaller y) on the right half than on the left
    def blue_ys(x0: int, x1: int) -> list[int]:
        return [y for y, r in enumerate(rows) for x in range(x0, x1)
                if tuple(r[3 * x:3 * x + 3]) == BLUE and y < 130]
    assert min(blue_ys(280, 320)) < min(blue_ys(80, 120))


def test_nice_max_and_moving_average():
    assert [nice_max(v) for v in (0, 0.7, 3, 600, 630, 1000)] == [1, 1, 5, 1000, 1000, 1000]
    assert nice_max(210) == 250
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
