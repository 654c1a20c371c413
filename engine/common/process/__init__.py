"""Process supervision for the engine: spawn children in their own sessions with a log
file and a pid file, make children die with their parent, and restart or stop them under
a restart policy with backoff (engine.common.process.restart_policy; Heron's executor process
monitor).

The names below load on first use (PEP 562): every role reads its restart policy from
here, but only the executors and schedulers spawn and supervise, and the spawner's psutil
and the supervisor's threads would otherwise cost each instance and Stream Manager start-up
time it never uses. The function that starts a child is
``engine.common.process.spawn.spawn``: a name shared with its module cannot load lazily
(importing the module binds the module to that name on the package).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.common.lazy_names import names_on_first_use

if TYPE_CHECKING:
    from engine.common.process.parent import PARENT_PID_ENV, die_with_parent
    from engine.common.process.restart_policy import (
        RestartPolicy,
        RestartRecord,
        RestartTracker,
    )
    from engine.common.process.spawn import read_pid_file, stop_groups, write_pid_file
    from engine.common.process.spec import ProcessSpec
    from engine.common.process.supervisor import Supervisor, SupervisorEvent

#: each public name -> the submodule that defines it
_HOMES = {
    "PARENT_PID_ENV": "parent", "die_with_parent": "parent",
    "RestartPolicy": "restart_policy", "RestartRecord": "restart_policy",
    "RestartTracker": "restart_policy",
    "read_pid_file": "spawn", "stop_groups": "spawn",
    "write_pid_file": "spawn",
    "ProcessSpec": "spec",
    "Supervisor": "supervisor", "SupervisorEvent": "supervisor",
}

__all__ = ["PARENT_PID_ENV", "ProcessSpec", "RestartPolicy", "RestartRecord", "RestartTracker",
           "Supervisor", "SupervisorEvent", "die_with_parent", "read_pid_file", "stop_groups",
           "write_pid_file"]

__getattr__ = names_on_first_use(__name__, _HOMES)
