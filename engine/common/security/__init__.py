"""Trust between engine processes: owner-only paths, a topology's CurveZMQ keys, and
the guard that authenticates every TCP peer. See docs/security.md for the threat model."""
