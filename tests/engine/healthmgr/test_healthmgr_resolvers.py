"""Resolvers: Heron's scale-up formula exactly, scale-down sizing, restart targets."""

from __future__ import annotations

import pytest

from engine.healthmgr.records import Action, ActionKind, Diagnosis, DiagnosisKind, Note
from engine.healthmgr.resolvers.restart_container import RestartContainerResolver
from engine.healthmgr.resolvers.scale_down import ScaleDownResolver, scale_down_parallelism
from engine.healthmgr.resolvers.scale_up import ScaleUpResolver, scale_up_parallelism
from engine.healthmgr.topology import ComponentView


def view(n: int, *, fields: bool = False) -> ComponentView:
    return ComponentView("count", {f"container_{1 + k % 2}_count_{k}": 1 + k % 2
                                   for k in range(n)}, fields_grouped=fields)


@pytest.mark.parametrize(("bp", "n", "maximum", "expected"), [
    # the example: unused = 900/100 = 9, capped at 4: ceil(2 x 5) = 10
    (900.0, 2, 16, 10),
    (900.0, 2, 8, 8),        # then capped by the configured maximum
    (500.0, 3, 100, 6),      # unused 1: doubles
    (200.0, 4, 100, 5),      # unused 0.25: ceil(4 x 1.25) = 5
    (50.0, 4, 100, 5),       # unused 0.0526: ceil(4.21) = 5, never stays put
    (750.0, 1, 100, 4),      # unused 3
    (2400.0, 3, 100, 15),    # three instances at 800 each: bp capped at 999, unused at 4
    (999.0, 2, 100, 10),
])
def test_heron_scale_up_formula(bp, n, maximum, expected):
    assert scale_up_parallelism(bp, n, maximum) == expected


def test_scale_up_resolver_proposes_the_formulas_target():
    d = Diagnosis(DiagnosisKind.UNDER_PROVISIONING, "count", 5.0, detail={"ms_per_s": 900.0})
    action = ScaleUpResolver(max_parallelism=16).resolve(d, view(2))
    assert isinstance(action, Action)
    assert (action.kind, action.current, action.target) == (ActionKind.SCALE, 2, 10)


def test_scale_up_at_the_limit_is_a_note_not_an_action():
    d = Diagnosis(DiagnosisKind.UNDER_PROVISIONING, "count", 5.0, detail={"ms_per_s": 900.0})
    outcome = ScaleUpResolver(max_parallelism=4).resolve(d, view(4))
    assert isinstance(outcome, Note)
    assert "limit" in outcome.message


@pytest.mark.parametrize(("peak", "capacity", "headroom", "expected"), [
    (290.0, 200.0, 0.3, 3),   # 290 / 140 = 2.07
    (280.0, 200.0, 0.3, 2),   # exactly 2 x 140
    (600.0, 200.0, 0.0, 3),
    (0.0, 200.0, 0.3, 1),     # an idle bolt keeps one instance
    (1.0, 500.0, 0.5, 1),
])
def test_scale_down_sizes_for_the_peak_with_headroom(peak, capacity, headroom, expected):
    assert scale_down_parallelism(peak, capacity, headroom) == expected


def over(peak: float) -> Diagnosis:
    return Diagnosis(DiagnosisKind.OVER_PROVISIONING, "count", 5.0,
                     detail={"peak_rate": peak, "capacity_per_instance": 200.0,
                             "capacity_from": "saturated"})


def test_scale_down_resolver_proposes_fewer_instances():
    action = ScaleDownResolver(headroom=0.3).resolve(over(290.0), view(8))
    assert isinstance(action, Action)
    assert (action.current, action.target) == (8, 3)


def test_a_fields_grouped_bolt_is_scaled_down_only_when_keys_may_move():
    held = ScaleDownResolver(allow_key_moves=False).resolve(over(100.0), view(4, fields=True))
    assert isinstance(held, Note) and "allowKeyMoves" in held.message
    moved = ScaleDownResolver(allow_key_moves=True).resolve(over(100.0), view(4, fields=True))
    assert isinstance(moved, Action) and moved.target == 1


def test_scale_down_that_would_not_remove_an_instance_is_a_note():
    assert isinstance(ScaleDownResolver().resolve(over(290.0), view(3)), Note)


def test_restart_targets_the_container_of_the_slowest_instance():
    d = Diagnosis(DiagnosisKind.SLOW_INSTANCE, "count", 5.0,
                  instances=("container_1_count_0", "container_2_count_1"),
                  detail={"mean_queue_bytes": {"container_1_count_0": 10_000.0,
                                               "container_2_count_1": 90_000.0}})
    action = RestartContainerResolver().resolve(d, view(4))
    assert isinstance(action, Action)
    assert (action.kind, action.container) == (ActionKind.RESTART_CONTAINER, 2)


def test_restart_of_an_instance_gone_from_the_plan_is_a_note():
    d = Diagnosis(DiagnosisKind.SLOW_INSTANCE, "count", 5.0, instances=("container_9_count_77",))
    assert isinstance(RestartContainerResolver().resolve(d, view(2)), Note)
