"""A small line chart written as a PNG with the standard library only (zlib + struct):
matplotlib is not a dependency, and a benchmark's chart needs lines, steps, vertical
marks, axes and a few labels, not a plotting library.

    chart = Chart(900, 420)
    chart.plot(ts, values, (31, 78, 121), axis="left")
    chart.plot(ts, others, (31, 111, 67), axis="right", step=True)
    chart.save(Path("out.png"), title="...", left_label="tuples/s", right_label="instances")

Text uses a built-in 3x5 pixel font (upper case, digits, a few signs), scaled x2.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

Color = tuple[int, int, int]

#: 3x5 glyphs, one string of 15 bits (rows top to bottom, 3 columns each) per character
_FONT = {
    "A": "010101111101101", "B": "110101110101110", "C": "011100100100011",
    "D": "110101101101110", "E": "111100110100111", "F": "111100110100100",
    "G": "011100101101011", "H": "101101111101101", "I": "111010010010111",
    "J": "001001001101010", "K": "101101110101101", "L": "100100100100111",
    "M": "101111111101101", "N": "110101101101101", "O": "010101101101010",
    "P": "110101110100100", "Q": "010101101110011", "R": "110101110101101",
    "S": "011100010001110", "T": "111010010010010", "U": "101101101101111",
    "V": "101101101101010", "W": "101101111111101", "X": "101101010101101",
    "Y": "101101010010010", "Z": "111001010100111",
    "0": "111101101101111", "1": "010110010010111", "2": "110001010100111",
    "3": "110001010001110", "4": "101101111001001", "5": "111100110001110",
    "6": "011100111101111", "7": "111001010010010", "8": "111101111101111",
    "9": "111101111001110", " ": "000000000000000", ".": "000000000000010",
    "/": "001001010100100", "(": "010100100100010", ")": "010001001001010",
    "-": "000000111000000", ":": "000010000010000", ",": "000000000010100",
    "%": "101001010100101", "=": "000111000111000",
}
_SCALE = 2


def encode_png(width: int, height: int, rows: Sequence[bytes | bytearray]) -> bytes:
    """An 8-bit RGB PNG of ``rows`` (each ``width * 3`` bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + bytes(row) for row in rows)  # filter type 0 per row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


class Canvas:
    """RGB pixels with lines, rectangles and text."""

    def __init__(self, width: int, height: int, background: Color = (255, 255, 255)) -> None:
        self.width, self.height = width, height
        self.rows = [bytearray(bytes(background) * width) for _ in range(height)]

    def pixel(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.rows[y][3 * x:3 * x + 3] = bytes(color)

    def rect(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        for y in range(max(0, y0), min(self.height, y1 + 1)):
            for x in range(max(0, x0), min(self.width, x1 + 1)):
                self.rows[y][3 * x:3 * x + 3] = bytes(color)

    def line(self, x0: float, y0: float, x1: float, y1: float, color: Color,
             width: int = 1, dash: int = 0) -> None:
        """Bresenham between rounded ends, ``width`` pixels thick; ``dash`` px on/off."""
        ax, ay, bx, by = round(x0), round(y0), round(x1), round(y1)
        dx, dy = abs(bx - ax), -abs(by - ay)
        sx, sy = (1 if ax < bx else -1), (1 if ay < by else -1)
        err, step = dx + dy, 0
        half = (width - 1) // 2
        while True:
            if not dash or (step // dash) % 2 == 0:
                self.rect(ax - half, ay - half, ax - half + width - 1, ay - half + width - 1, color)
            if ax == bx and ay == by:
                return
            step += 1
            e2 = 2 * err
            if e2 >= dy:
                err += dy
                ax += sx
            if e2 <= dx:
                err += dx
                ay += sy

    def text(self, x: int, y: int, text: str, color: Color, align: str = "left") -> None:
        advance = 4 * _SCALE
        if align == "right":
            x -= advance * len(text)
        elif align == "center":
            x -= advance * len(text) // 2
        for ch in text.upper():
            bits = _FONT.get(ch, _FONT[" "])
            for i, bit in enumerate(bits):
                if bit == "1":
                    r, c = divmod(i, 3)
                    self.rect(x + c * _SCALE, y + r * _SCALE, x + c * _SCALE + _SCALE - 1,
                              y + r * _SCALE + _SCALE - 1, color)
            x += advance

    def png(self) -> bytes:
        return encode_png(self.width, self.height, self.rows)


def nice_max(value: float) -> float:
    """The smallest 1, 2, 2.5 or 5 x 10^k at or above ``value`` (an axis' top)."""
    if value <= 0:
        return 1.0
    m = 10 ** math.floor(math.log10(value))
    for f in (1, 2, 2.5, 5, 10):
        if f * m >= value * (1 - 1e-9):
            return f * m
    return 10 * m


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


class Chart:
    """Series against a shared time axis, on a left and an optional right y axis."""

    GRID = (225, 229, 234)
    AXIS = (100, 112, 125)

    def __init__(self, width: int = 900, height: int = 420) -> None:
        self.width, self.height = width, height
        self.series: list[tuple[list[float], list[float], Color, str, bool, str]] = []
        self.marks: list[tuple[float, Color]] = []

    def plot(self, ts: Sequence[float], values: Sequence[float], color: Color, *,
             axis: str = "left", step: bool = False, label: str = "") -> None:
        self.series.append((list(ts), list(values), color, axis, step, label))

    def mark(self, t: float, color: Color) -> None:
        """A dashed vertical line at ``t`` (an action, a load step)."""
        self.marks.append((t, color))

    def render(self, title: str = "", left_label: str = "", right_label: str = "",
               time_label: str = "TIME (S)") -> bytes:
        canvas = Canvas(self.width, self.height)
        left, right, top, bottom = 70, self.width - 70, 40, self.height - 70
        all_t = [t for s in self.series for t in s[0]] + [t for t, _ in self.marks]
        t0, t1 = (min(all_t), max(all_t)) if all_t else (0.0, 1.0)
        t1 = t1 if t1 > t0 else t0 + 1
        tops = {}
        for axis in ("left", "right"):
            values = [v for s in self.series if s[3] == axis for v in s[1]]
            if values and all(float(v).is_integer() for v in values):  # counts: whole ticks
                tops[axis] = float(4 * math.ceil((max(values) + 1) / 4))
            else:
                tops[axis] = nice_max(max(values, default=0) * 1.05)

        def x(t: float) -> float:
            return left + (t - t0) / (t1 - t0) * (right - left)

        def y(v: float, axis: str) -> float:
            return bottom - max(0.0, v) / tops[axis] * (bottom - top)

        for i in range(5):  # grid and y ticks
            gy = bottom - i * (bottom - top) / 4
            canvas.line(left, gy, right, gy, self.GRID)
            canvas.text(left - 6, round(gy) - 5, _fmt(tops["left"] * i / 4), self.AXIS, "right")
            if any(s[3] == "right" for s in self.series):
                canvas.text(right + 6, round(gy) - 5, _fmt(tops["right"] * i / 4), self.AXIS)
        tick = nice_max((t1 - t0) / 8)
        t = 0.0
        while t <= t1 - t0 + 1e-9:  # x ticks: seconds from the start
            gx = x(t0 + t)
            canvas.line(gx, bottom, gx, bottom + 4, self.AXIS)
            canvas.text(round(gx), bottom + 8, _fmt(t), self.AXIS, "center")
            t += tick
        canvas.line(left, top, left, bottom, self.AXIS)
        canvas.line(left, bottom, right, bottom, self.AXIS)
        for mt, color in self.marks:
            canvas.line(x(mt), top, x(mt), bottom, color, dash=4)
        for ts, values, color, axis, step, _ in self.series:
            points = [(x(t), y(v, axis)) for t, v in zip(ts, values, strict=True)]
            for (ax, ay), (bx, by) in zip(points, points[1:]):
                if step:
                    canvas.line(ax, ay, bx, ay, color, width=2)
                    canvas.line(bx, ay, bx, by, color, width=2)
                else:
                    canvas.line(ax, ay, bx, by, color, width=2)
        canvas.text(left, 12, title, (29, 39, 51))
        canvas.text(left, bottom + 26, time_label, self.AXIS)
        canvas.text(8, top - 18, left_label, self.AXIS)
        if right_label:
            canvas.text(right, top - 18, right_label, self.AXIS, "right")
        lx = left  # legend under the axis label
        for *_, color, _axis, _step, label in self.series:
            if not label:
                continue
            canvas.rect(lx, bottom + 48, lx + 14, bottom + 51, color)
            canvas.text(lx + 20, bottom + 45, label, (29, 39, 51))
            lx += 20 + 8 * len(label) + 24
        return canvas.png()

    def save(self, path: Path, **labels: str) -> Path:
        path.write_bytes(self.render(**labels))
        return path
