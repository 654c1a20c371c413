"""Scale up an under-provisioned bolt by Heron's formula (``ScaleUpResolver``).

``bp`` is the component's backpressure over the window in ms per second (the sum of its
instances' means), capped at 999 so the division stays finite; the capacity missing is
``unused = bp / (1000 - bp)`` (900 ms/s of backpressure: the bolt keeps up 1/10 of the
time, it needs 10x), capped at 4 (Heron's fence: never more than 5x at once, since the
estimate is crude and a later round can add more); the new parallelism is
``ceil(n x (1 + unused))``. Beyond Heron it is capped by the configured maximum."""

from __future__ import annotations

import math

from engine.healthmgr.records import Action, ActionKind, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.topology import ComponentView

#: Heron caps the component's backpressure at 999 ms/s before dividing by 1000 - bp
MAX_BP_MS = 999.0
#: Heron's scale-up fence: the unused capacity estimate is capped at 4 (at most 5x)
MAX_UNUSED = 4.0


def scale_up_parallelism(back_pressure_ms_per_s: float, parallelism: int,
                         max_parallelism: int | None = None) -> int:
    """Heron's new parallelism, then capped by ``max_parallelism`` when given."""
    bp = min(back_pressure_ms_per_s, MAX_BP_MS)
    unused = min(bp / (1000 - bp), MAX_UNUSED)
    target = math.ceil(parallelism * (1 + unused))
    return target if max_parallelism is None else min(target, max_parallelism)


class ScaleUpResolver:
    def __init__(self, max_parallelism: int) -> None:
        self.max_parallelism = max_parallelism

    def resolve(self, diagnosis: Diagnosis, view: ComponentView) -> Action | Note:
        assert diagnosis.kind is DiagnosisKind.UNDER_PROVISIONING
        if view.scaling_refused:  # before any action: the scheduler is never asked
            return Note(diagnosis.time, f"{view.name} is under-provisioned but not scaled: "
                        f"{view.scaling_refused}", component=view.name)
        bp = float(diagnosis.detail.get("ms_per_s", 0.0))
        n = view.parallelism
        target = scale_up_parallelism(bp, n, self.max_parallelism)
        if target <= n:
            return Note(diagnosis.time, f"{view.name} is under-provisioned but already at "
                        f"{n} instances, the limit ({self.max_parallelism})",
                        component=view.name)
        return Action(ActionKind.SCALE, view.name, diagnosis.time, diagnosis.kind,
                      f"{bp:.0f} ms/s of backpressure at {n} instances", current=n,
                      target=target)
