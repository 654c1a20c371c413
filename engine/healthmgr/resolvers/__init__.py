"""Resolvers: one action computed from a diagnosis, never applied here.

Each returns an :class:`~engine.healthmgr.records.Action` (status ``proposed``) or a
:class:`~engine.healthmgr.records.Note` saying why nothing can be done; the loop puts
the action through its guard rails and the actuator."""
