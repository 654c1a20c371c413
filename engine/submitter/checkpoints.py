"""Where an effectively-once topology's checkpoints go on a cluster, decided at submit.

A topology's checkpoints must be readable by whichever node runs each task next: after a
node dies its containers start elsewhere and every task restores the state it saved
(docs/stateful.md). The storage's default root, ``<working dir>/checkpoints``, is beside
each container's working directory, which on a Slurm node or a Kubernetes pod is private
to it: a container that moved would find no state, and a rollback would fall back past
every checkpoint. So a cluster names a directory every node mounts in its
``stateful.yaml`` (engine/common/cluster/config.py), and the submitter gives it to the topology:

* a key the topology's config sets wins (it is the topology's own choice);
* each ``stateful.yaml`` key the topology does not set is added to the submission's
  options (``Submission.options``, the command line's ``-o``), and the topology is
  compiled again with them. Every process rebuilds the topology from the submission
  (the Topology Master and the Stream Managers read the stored plan, the instances
  compile it again on their node), so all of them see the same root;
* a cluster whose containers run elsewhere (any scheduler but ``local``) with no root
  from either is refused at submit, naming the key and the file, rather than losing
  state silently when a container moves. ``local`` keeps the default.

Savepoints (``heron savepoint``) go beside the checkpoints, in ``<root>/savepoints``,
or under the user's heron home on ``local`` without a root; the submitter records the
directory in the topology's config (``heron.statefulstorage.savepoints.path``), so the
Topology Master writes there and ``--from-savepoint ID`` finds it.

Topologies in the other reliability modes save nothing and are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.common.cluster.config import ClusterConfig
from engine.common.launch import Submission
from engine.common.submission import LoadedTopology
from engine.config.errors import ConfigError
from engine.config.keys import SAVEPOINTS_KEY, STORAGE_ROOT_KEY, with_defaults
from engine.config.reliability import reliability
from engine.submitter.errors import refused

__all__ = ["missing_root_message", "savepoints_dir", "storage_options", "with_cluster_storage"]


def _effectively_once(config: Mapping[str, Any]) -> bool:
    try:
        return reliability(with_defaults(dict(config))).effectively_once
    except ConfigError:
        return False  # a bad mode is reported by the engines' own checks, with its key


def missing_root_message(name: str, cluster: ClusterConfig) -> str:
    """The one line a submission with nowhere shared to checkpoint is refused with."""
    return (f"topology {name!r} is EFFECTIVELY_ONCE but the {cluster.scheduler} cluster "
            f"{cluster.name!r} names no checkpoint directory: set {STORAGE_ROOT_KEY} (a "
            f"directory every node mounts) in {cluster.file_of('stateful.yaml')} or in the "
            f"topology's config; a container's own working directory would lose its state "
            f"when the container moves to another node")


def savepoints_dir(cluster: ClusterConfig, config: Mapping[str, Any],
                   home: Path | None) -> str | None:
    """Where this topology's savepoints go: its own key, else ``<checkpoint root>/
    savepoints`` (the topology's root, else the cluster's), else ``<home>/savepoints``."""
    if config.get(SAVEPOINTS_KEY) not in (None, ""):
        return str(config[SAVEPOINTS_KEY])
    root = config.get(STORAGE_ROOT_KEY) or cluster.stateful_storage.get(STORAGE_ROOT_KEY)
    if root:
        return str(Path(str(root)).expanduser() / "savepoints")
    return str(home / "savepoints") if home is not None else None


def storage_options(cluster: ClusterConfig, name: str, config: Mapping[str, Any],
                    home: Path | None = None) -> dict[str, Any]:
    """The ``stateful.yaml`` keys to add to the topology ``name`` whose compiled config
    is ``config``: those it does not set itself, and where its savepoints go; none when
    it is not effectively-once. Raises the submitter's refusal (exit 2) when a remote
    cluster leaves it no root."""
    if not _effectively_once(config):
        return {}
    added = {k: v for k, v in cluster.stateful_storage.items() if config.get(k) in (None, "")}
    if config.get(STORAGE_ROOT_KEY) in (None, "") and STORAGE_ROOT_KEY not in added \
            and not cluster.is_local:
        raise refused(missing_root_message(name, cluster))
    if config.get(SAVEPOINTS_KEY) in (None, ""):
        where = savepoints_dir(cluster, config, home)
        if where:
            added[SAVEPOINTS_KEY] = where
    return added


def with_cluster_storage(cluster: ClusterConfig, loaded: LoadedTopology, submission: Submission,
                         home: Path | None = None) -> tuple[LoadedTopology, Submission]:
    """``(loaded, submission)`` with the cluster's storage keys the topology lacks, the
    topology compiled again from the new submission as every node will compile it;
    unchanged when nothing is added."""
    added = storage_options(cluster, loaded.plan.name, loaded.plan.config, home)
    if not added:
        return loaded, submission
    submission = dataclasses.replace(submission, options={**submission.options, **added})
    return submission.load(), submission
