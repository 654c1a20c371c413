"""The Slurm scheduler: each container of a topology is a Slurm job of its own."""

from engine.scheduler.slurm.scheduler import SlurmCommands, SlurmError, SlurmScheduler

__all__ = ["SlurmCommands", "SlurmError", "SlurmScheduler"]
