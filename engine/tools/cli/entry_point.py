"""The ``heron`` console script: :func:`engine.tools.cli.main.main`, behind one guard.

Importing the commands imports the tuple path, which is chosen at import
(engine/common/codec/selection.py). Under ``HERON_REQUIRE_COMPILED=1`` a stale or missing
build is refused right there, before any command could report it, so this module, which
imports nothing of the engine until called, turns that refusal into the CLI's usual one
line and exit code 1 instead of a traceback.
"""

from __future__ import annotations

import sys

#: the module whose errors mean "the tuple path asked for cannot be used"
_SELECTION = "engine.common.codec.selection"


def _is_tuple_path_error(exc: BaseException) -> bool:
    # by name: the package that defines the class failed to import, so it cannot be
    # imported again here to name the class
    return any(cls.__name__ == "TuplePathError" and cls.__module__ == _SELECTION
               for cls in type(exc).__mro__)


def main() -> None:
    # a command's module loads when the command runs (engine/tools/cli/main.py), so the
    # refusal can come from the import or from the command's first use of the tuple path
    try:
        from engine.tools.cli.main import main as heron

        heron()
    except RuntimeError as exc:
        if not _is_tuple_path_error(exc):
            raise
        print(f"heron: error: {exc} (or unset HERON_REQUIRE_COMPILED to run the pure-Python "
              "tuple path)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main()
