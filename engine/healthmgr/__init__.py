"""The Health Manager's decision logic (Dhalion's symptom -> diagnosis -> resolution loop).

Laid out as Heron's ``heron/healthmgr``: ``sensors`` turn raw metric samples from a
:class:`~engine.healthmgr.source.MetricsSource` into per-instance series over a window,
``detectors`` find symptoms in them, ``diagnosers`` name the cause, ``resolvers`` compute
one action (they never apply it), ``policies`` bundle those with their configuration,
and :class:`~engine.healthmgr.loop.HealthLoop` runs the policies under guard rails and
applies an action through an :class:`~engine.healthmgr.actuator.Actuator`.

Everything here is pure and clocked from outside, so it runs in unit tests without
processes; the engine supplies the metrics source, the topology view and the actuator.
"""
