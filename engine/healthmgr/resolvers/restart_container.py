"""Restart the container of a slow instance (Heron's ``RestartContainerResolver``).

Heron restarts the containers of every instance in backpressure; here only the slow
instance's, as the issue asks: an instance slow while its peers are not is likely on a
bad host or in a bad state, and a restart gives it a fresh process (and, on a cluster,
maybe another machine). One container per action: the one of the instance with the
largest wait queue; if another stays slow, a later round restarts it after the wait."""

from __future__ import annotations

from engine.healthmgr.records import Action, ActionKind, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.topology import ComponentView


class RestartContainerResolver:
    def resolve(self, diagnosis: Diagnosis, view: ComponentView) -> Action | Note:
        assert diagnosis.kind is DiagnosisKind.SLOW_INSTANCE
        queues = diagnosis.detail.get("mean_queue_bytes", {})
        known = [i for i in diagnosis.instances if i in view.instances]
        if not known:
            return Note(diagnosis.time, f"slow instances {list(diagnosis.instances)} of "
                        f"{view.name} are no longer in the physical plan",
                        component=view.name)
        slowest = max(known, key=lambda i: (queues.get(i, 0.0), i))
        container = view.instances[slowest]
        return Action(ActionKind.RESTART_CONTAINER, view.name, diagnosis.time, diagnosis.kind,
                      f"instance {slowest} is slow while its peers are not", container=container)
