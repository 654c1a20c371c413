"""The streamparse/pystorm API, identical in names, signatures, defaults and behaviour.

``from compat.storm_api import Spout, Bolt, Topology, Grouping`` is a drop-in for
``from streamparse import ...``. The ``storm`` engine lives in ``engine.storm``;
``compat.storm_api.testing`` unit-tests components with no engine.
"""

from compat.storm_api.bolt import BatchingBolt, Bolt, TicklessBatchingBolt
from compat.storm_api.component import Component, StormHandler
from compat.storm_api.dsl import Grouping, Stream, Topology
from compat.storm_api.shell import JavaBolt, JavaSpout, ShellBolt, ShellSpout
from compat.storm_api.spout import ReliableSpout, Spout
from compat.storm_api.state import (
                                    HashMapState,
                                    KeyedState,
                                    State,
                                    StatefulComponent,
                                    TwoPhaseCommitBolt,
)
from compat.storm_api.tuple import Tuple

__version__ = "5.0.1"
VERSION = (5, 0, 1)  # literal: the submodule `tuple` shadows the builtin here

__all__ = [
    "BatchingBolt",
    "Bolt",
    "Component",
    "Grouping",
    "HashMapState",
    "JavaBolt",
    "KeyedState",
    "JavaSpout",
    "ReliableSpout",
    "ShellBolt",
    "ShellSpout",
    "Spout",
    "State",
    "StatefulComponent",
    "StormHandler",
    "Stream",
    "TicklessBatchingBolt",
    "Topology",
    "Tuple",
    "TwoPhaseCommitBolt",
    "VERSION",
    "__version__",
]
