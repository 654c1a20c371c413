"""Heron's ``scheduler-core``: the one submitter and the one runtime manager every cluster
goes through, local included.

* :mod:`~engine.submitter.submitter`: ``heron submit`` (state, package, upload, launch);
* :mod:`~engine.submitter.deploy`: writing a topology's state and launch file (also
  ``heron run --engine heron``);
* :mod:`~engine.submitter.upload`: the package and the ZooKeeper state of a remote cluster;
* :mod:`~engine.submitter.launcher`: handing a topology to its scheduler (Heron's
  ``ILauncher``): the scheduler service, or Kubernetes in this process;
* :mod:`~engine.submitter.runtime`: kill, restart and update;
* :mod:`~engine.submitter.update`: the packing plan ``heron update`` proposes.

The plug-ins it drives implement engine.spi; it chooses them through
engine.scheduler, engine.packing and engine.uploader.
"""
