"""Tell a Python 2 file from a plain syntax error, so the failure message says what to do."""

from __future__ import annotations

import re

_PY2_PATTERNS = re.compile(
    r"""^[ \t]*(?:
        print[ \t]+[^\s(=,)\]}.] |      # print x
        print[ \t]*>> |                 # print >>f, x
        exec[ \t]+["'] |                # exec "code"
        except[ \t]+[\w.]+[ \t]*,[ \t]*\w+[ \t]*:   # except E, e:
    )""",
    re.MULTILINE | re.VERBOSE,
)

HINT = ("looks like Python 2 (e.g. `print x`); convert it to Python 3 first "
        "(`2to3 -w FILE` on Python <= 3.12, or pyupgrade) and run heron-migrate again")


def python2_hint(source: str) -> str:
    """The hint to show when ``source`` failed to parse because it is Python 2, else ""."""
    return HINT if _PY2_PATTERNS.search(source) else ""
