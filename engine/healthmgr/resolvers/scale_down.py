"""Scale down an over-provisioned bolt (beyond Heron): to the parallelism the observed
rate needs, with headroom.

The rate is the window's *peak* total execute rate (not its mean: size for the busiest
moment seen), and each instance is planned to run at ``1 - headroom`` of its capacity::

    target = max(1, ceil(peak rate / (capacity per instance x (1 - headroom))))

A fields-grouped bolt changes which instance owns which key when its parallelism
changes; that is only done when the policy allows keys to move."""

from __future__ import annotations

import math

from engine.healthmgr.records import Action, ActionKind, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.topology import ComponentView

#: instances are sized to run at 70% of their capacity: room for the load to grow by
#: 40% before backpressure, and above the over-provisioning limit (50%) so a bolt
#: scaled down is not immediately over-provisioned again
DEFAULT_HEADROOM = 0.3


def scale_down_parallelism(peak_rate: float, capacity_per_instance: float,
                           headroom: float = DEFAULT_HEADROOM) -> int:
    """The fewest instances that execute ``peak_rate`` at ``1 - headroom`` of capacity."""
    if capacity_per_instance <= 0 or not 0 <= headroom < 1:
        raise ValueError("capacity must be positive and headroom in [0, 1)")
    return max(1, math.ceil(peak_rate / (capacity_per_instance * (1 - headroom))))


class ScaleDownResolver:
    def __init__(self, headroom: float = DEFAULT_HEADROOM, allow_key_moves: bool = False) -> None:
        self.headroom = headroom
        self.allow_key_moves = allow_key_moves

    def resolve(self, diagnosis: Diagnosis, view: ComponentView) -> Action | Note:
        assert diagnosis.kind is DiagnosisKind.OVER_PROVISIONING
        n = view.parallelism
        if view.scaling_refused:  # before any action: the scheduler is never asked
            return Note(diagnosis.time, f"{view.name} is over-provisioned but not scaled: "
                        f"{view.scaling_refused}", component=view.name)
        if view.fields_grouped and not self.allow_key_moves:
            return Note(diagnosis.time, f"{view.name} is over-provisioned but fields-grouped, "
                        "and the policy does not allow keys to move "
                        "(ScaleDownResolver.allowKeyMoves)", component=view.name)
        peak = float(diagnosis.detail["peak_rate"])
        capacity = float(diagnosis.detail["capacity_per_instance"])
        target = scale_down_parallelism(peak, capacity, self.headroom)
        if target >= n:
            return Note(diagnosis.time, f"{view.name} needs its {n} instances at "
                        f"{peak:.1f} tuples/s with {self.headroom:.0%} headroom",
                        component=view.name)
        return Action(ActionKind.SCALE, view.name, diagnosis.time, diagnosis.kind,
                      f"peak {peak:.1f} tuples/s, {capacity:.1f}/s per instance "
                      f"({diagnosis.detail.get('capacity_from', '?')}), "
                      f"{self.headroom:.0%} headroom", current=n, target=target)
