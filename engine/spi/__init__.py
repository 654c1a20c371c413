"""The interfaces every plug-in implements (Heron's ``heron/spi``).

A scheduler (:class:`Scheduler`), a packing algorithm (:class:`Packing`), an uploader
(:class:`Uploader`) and a state manager (:class:`StateManager`) are each one module or
folder that implements its interface and imports nothing of another plug-in; the
submitter and the runtime manager (engine/submitter) talk to them through these
interfaces only. A plug-in is chosen by a dictionary from a config value to a class
(engine.scheduler.registry.SCHEDULERS, engine.packing.PACKINGS,
engine.uploader.UPLOADERS), not by
reflection on a class name; Heron's class names stay accepted as aliases where a cluster
directory names them (engine.common.cluster.config).
"""

from engine.spi.packing import Packing
from engine.spi.scheduler import KillOnce, Scheduler, ServiceScheduler
from engine.spi.statemgr import StateManager
from engine.spi.uploader import Uploader

__all__ = ["KillOnce", "Packing", "Scheduler", "ServiceScheduler", "StateManager", "Uploader"]
