"""The Metrics Manager: one per container, collecting what its processes publish and
forwarding it to the Topology Master (which answers `heron run`'s progress queries)."""
