"""Process supervision for the engine: spawn children in their own sessions with a log
file and a pid file, make children die with their parent, and restart or stop them under
a restart policy with backoff (engine.common.process.restart_policy; Heron's executor process
monitor)."""

from engine.common.process.parent import PARENT_PID_ENV, die_with_parent
from engine.common.process.restart_policy import RestartPolicy, RestartRecord, RestartTracker
from engine.common.process.spawn import read_pid_file, spawn, stop_groups, write_pid_file
from engine.common.process.spec import ProcessSpec
from engine.common.process.supervisor import Supervisor, SupervisorEvent

__all__ = ["PARENT_PID_ENV", "ProcessSpec", "RestartPolicy", "RestartRecord", "RestartTracker",
           "Supervisor", "SupervisorEvent", "die_with_parent", "read_pid_file", "spawn",
           "stop_groups", "write_pid_file"]
