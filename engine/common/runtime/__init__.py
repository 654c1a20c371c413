"""Runtime types both engines share, below either of them.

The ``storm`` reference engine (:mod:`engine.storm`) and the heron engine's instances
(:mod:`engine.instance`) count, lay out, log and capture tasks the same way, so what they
report can be compared line for line. Those shared pieces live here, and this package
imports neither engine:

- :mod:`engine.common.runtime.stats`: per-task and per-component counters;
- :mod:`engine.common.runtime.layout`: Storm's task numbering and the ``context`` each task gets;
- :mod:`engine.common.runtime.errors`: runtime errors that name the component and task;
- :mod:`engine.common.runtime.capture`: the summary of what leaf streams produced
  (``OutputCapture``) and the ``CaptureSink`` protocol;
- :mod:`engine.common.runtime.capture_format`: the capture line format (one JSON line per tuple,
  one file per task) that the conformance suite reads;
- :mod:`engine.common.runtime.logs`: per-task log files.
"""
