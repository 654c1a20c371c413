"""Package ``__init__`` files whose names load on first use (PEP 562).

A topology starts a dozen role processes, and each restart starts one more; a package
that gathers its submodules' names for its users would make every process that imports
one of them pay for all of them. Such a package lists where each name lives and sets
``__getattr__ = names_on_first_use(__name__, homes)``; a ``TYPE_CHECKING`` block imports
the same names for type checkers and readers.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def names_on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps each public name to the
    submodule that defines it, imported when the name is first read (then kept on the
    package, so later reads are plain attribute reads). A name may not be one of the
    submodules': importing that submodule from anywhere binds the module to the name on
    the package, and the name would then be the module, not what it exports."""
    shadowed = sorted(set(homes) & set(homes.values()))
    if shadowed:
        raise ValueError(f"{package}: {', '.join(shadowed)} would be shadowed by the "
                         "submodule of the same name; import it from the submodule")

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return load
