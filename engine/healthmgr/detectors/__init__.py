"""Detectors: symptoms found in one policy's measurements, one detector per module.

Defaults and key names are Heron's (``<DetectorClass>.<param>``); the over-provisioning
detector is this project's own, for scaling down."""
