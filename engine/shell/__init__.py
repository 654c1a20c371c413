"""A container's shell: Heron's ``heron-shell``, the one process of a container that
answers questions about the container itself rather than about tuples.

On a cluster the container's log files are written on the node that runs it (a Slurm
node's private temporary directory, a Kubernetes pod), where the submitting machine
cannot read them. The shell runs inside the container's executor, listens on the node's
address behind the topology's CurveZMQ keys, and serves those files: ``heron logs`` and
the tracker find it through the state manager (``shell_endpoint`` of container 0's
Topology Master location and of every Stream Manager in the physical plan).

- :mod:`engine.shell.logfiles`: which files are logs and how they are read safely
  (shared with the tracker, which reads a local topology's files directly);
- :mod:`engine.shell.server`: the zmq server in the executor;
- :mod:`engine.shell.client`: finding a topology's shells and asking them.
"""
