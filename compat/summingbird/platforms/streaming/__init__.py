"""The streaming platform: a job planned into a topology for the ``storm`` or ``heron`` engine.

``run_streaming(job, engine=...)`` (or ``StreamingPlatform``) plans, runs and delivers
results like the memory and batch platforms; ``plan_topology(job, ...)`` gives the
Topology class for a project's topology file, so ``heron run``/``submit`` take a
Summingbird job like any topology. ``planner.py`` has the split rules, ``components.py``
the spout and bolts, ``ledger.py`` the replay-safe merges. See ``docs/decisions.md``
("Summingbird streaming").
"""

from .components import RunSettings
from .planner import AllowNonCommutative, PlannedNode, StreamingPlan, plan_streaming
from .runner import StreamingPlatform, StreamingResult, StreamingRun, run_streaming
from .topology import build_topology, plan_topology

__all__ = [
    "AllowNonCommutative",
    "PlannedNode",
    "RunSettings",
    "StreamingPlan",
    "StreamingPlatform",
    "StreamingResult",
    "StreamingRun",
    "build_topology",
    "plan_streaming",
    "plan_topology",
    "run_streaming",
]
