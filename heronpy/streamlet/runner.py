"""``Runner``: plans a ``Builder``'s graph into a heronpy topology and submits it.

``run(name, config, builder)`` builds a ``TopologyBuilder(name)``, sets the ``Config`` and
calls ``build_and_submit()``: under ``heron run FILE.py`` (the file's main run as
``__main__``) that hands the topology to the CLI like any heronpy builder script.
Streamlet elements are arbitrary Python values (windows, tuples, user objects), so the
topology's tuple serializer is pickle unless the config names one.
"""

from __future__ import annotations

from typing import Any

from heronpy.api.topology import TopologyBuilder
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config

#: our engines' tuple serializer key (heronpy pickled every tuple)
TUPLE_SERIALIZER = "topology.tuple.serializer"


class Runner:
    """Runs the topology a ``Builder`` describes."""

    def __init__(self) -> None:
        """Nothing to set up."""

    def run(self, name: str, config: Config, builder: Builder) -> Any:
        """Build the topology ``name`` and submit it; returns the topology class."""
        if not isinstance(name, str):
            raise RuntimeError("Name has to be a string type")
        if not isinstance(config, Config):
            raise RuntimeError("config has to be a Config type")
        if not isinstance(builder, Builder):
            raise RuntimeError("builder has to be a Builder type")
        bldr = TopologyBuilder(name=name)
        builder.build(bldr)
        topology_config = dict(config._api_config)
        topology_config.setdefault(TUPLE_SERIALIZER, "pickle")
        bldr.set_config(topology_config)
        return bldr.build_and_submit()
