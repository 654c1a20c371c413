"""Policies: sensors, detectors, diagnosers and resolvers bundled with their settings.

Heron's two: dynamic resource allocation (scale a bolt; here both ways) and auto-restart
(restart the container of a slow instance). ``config`` reads their settings."""
