"""heronpy's ``State`` and ``HashMapState``: the engines' own classes.

Under EFFECTIVELY_ONCE the engines give every stateful task a
``compat.storm_api.HashMapState`` and checkpoint it (docs/stateful.md); these are those
classes, so what a heronpy component is handed is an instance of what it imports. Both
heronpy's methods (``put``, ``get``, ``enumerate``, ``clear``) and a dict's work.
One difference from heronpy's Python class: ``enumerate()`` yields ``(key, value)``
pairs (as Heron's Java ``State`` iterates), where heronpy's yielded ``(index, key)``.
"""

from __future__ import annotations

from compat.storm_api.state import HashMapState, State

__all__ = ["State", "HashMapState"]
