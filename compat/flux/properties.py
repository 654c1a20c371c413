"""A reader of Java ``.properties`` files, the format of Flux's ``--filter FILE``.

Flux loads the filter with ``java.util.Properties.load``; a file written for it must
mean the same here, so this follows that format rather than an INI or dotenv dialect:
``key=value``, ``key: value`` and ``key value``; ``#`` and ``!`` comment lines; a line
ending in an odd number of backslashes continues on the next, whose leading blanks are
dropped; escapes ``\\t \\n \\r \\f \\uXXXX`` and ``\\x`` for any other ``x``; the last
of repeated keys wins. Java reads these files as ISO-8859-1; we read UTF-8 first (what
editors write today) and fall back to ISO-8859-1 for a file that is not UTF-8.
"""

from __future__ import annotations

from pathlib import Path

from .errors import FluxError, Where

__all__ = ["parse_properties", "read_properties"]

_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def read_properties(path: Path | str) -> dict[str, str]:
    """The properties of the file at ``path``; FluxError naming it when it cannot be read."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FluxError(Where(str(path), 1),
                        f"cannot read the properties file (--filter): {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("iso-8859-1")
    return parse_properties(text, str(path))


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """Parse the text of a ``.properties`` file into ``{key: value}``, in file order."""
    out: dict[str, str] = {}
    for line_no, logical in _logical_lines(text):
        key, value = _split(logical)
        out[_unescape(key, source, line_no)] = _unescape(value, source, line_no)
    return out


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, joined text) of each non-comment, non-blank logical line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    result: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].lstrip(_BLANKS)
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continues(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip(_BLANKS)
            i += 1
        if _continues(line):  # a continuation at the end of the file continues into nothing
            line = line[:-1]
        result.append((start + 1, line))
    return result


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """Split at the first unescaped ``=``, ``:`` or blank, as Properties.load does."""
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=:" or ch in _BLANKS:
            break
        i += 1
    key = line[:i]
    j = i
    while j < n and line[j] in _BLANKS:
        j += 1
    if j < n and line[j] in "=:":
        j += 1
        while j < n and line[j] in _BLANKS:
            j += 1
    return key, line[j:]


def _unescape(text: str, source: str, line_no: int) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            digits = text[i + 2:i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise FluxError(
                    Where(source, line_no),
                    f"malformed \\uxxxx escape {text[i : i + 6]!r} in the properties file",
                )
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)
