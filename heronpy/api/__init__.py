"""heronpy.api: spouts, bolts, topologies, groupings, state, metrics and hooks."""
