"""heronpy's ``StatefulComponent``: the engines' own mix-in.

``init_state(state)`` is called before ``initialize`` and ``pre_save(checkpoint_id)``
before each checkpoint, as in Heron; it is ``compat.storm_api.StatefulComponent`` so the
compiler marks the component stateful and both engines checkpoint and restore it.
"""

from __future__ import annotations

from compat.storm_api.state import StatefulComponent

__all__ = ["StatefulComponent"]
