"""Conformance: the same topologies on two engines, outputs diffed on PySpark, a report
people can trust (`heron-conformance`)."""
