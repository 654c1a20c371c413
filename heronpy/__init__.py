"""heronpy, Apache Heron's Python API, on this project's engines.

Heron was retired in 2023 and the last heronpy on PyPI (0.20.5) no longer installs on a
current Python. This package keeps heronpy's module paths, names, signatures and
defaults so Heron's Python topologies run unchanged, as a thin layer over the Storm-API
runtime in ``compat.storm_api``: a heronpy Spout or Bolt *is* a ``compat.storm_api``
component, and a heronpy Topology compiles to the same specs a streamparse one does.
See docs/heronpy.md for what is supported and what is not there yet.
"""
