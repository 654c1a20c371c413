"""Helpers shared by the Health Manager's tests."""

from __future__ import annotations

from engine.healthmgr.sensors import (
    Measurements,
    back_pressure_sensor,
    buffer_size_sensor,
    execute_count_sensor,
    execute_latency_sensor,
    measure,
)
from tests.engine.healthmgr.recordings import Recording


def measured(rec: Recording, window: float = 300.0, **view_options: object) -> Measurements:
    """Every sensor over every bolt of ``rec``, for the window ending at its last poll."""
    sensors = [back_pressure_sensor(window), buffer_size_sensor(window),
               execute_count_sensor(window), execute_latency_sensor(window)]
    return measure(sensors, rec.history, rec.view(**view_options).bolts(), rec.end)
