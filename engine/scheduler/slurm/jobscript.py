"""The batch script of one container's Slurm job, the script of a node's cleanup job,
and the comment that names a job.

Slurm keeps every batch script (the controller's StateSaveLocation, ``scontrol write
batch_script``, the node's slurmd spool, surviving restarts) and shows a job's arguments
and environment to ``scontrol show job``: nothing secret goes into any of them. The
ZooKeeper digest reaches the job as a file: the submitter writes it owner-only into
``UPLOADER_DIR/secrets-TOPOLOGY_ID/zk-auth`` (0600 in a 0700 directory, where every node
mounts the localfs uploader's directory, engine/submitter/upload.py), the script names
only that path, and the executor copies it into the container's owner-only ``secrets/``
(engine/executor/remote.py). ``heron kill`` (and a submit that fails) deletes it. The
topology's keys come from the digest-protected ZooKeeper node, never through Slurm.

On the node the script

1. refuses to write anything unless ``WORK_ROOT/heron-UID`` is a real directory owned by
   this user with mode 700 (another user could otherwise read the secrets, or swap the
   directory for a link to theirs);
2. sweeps the node: every ``heron-UID/TOPOLOGY_ID`` whose shared digest file (named in
   its ``secret-file``) is gone belongs to a topology that was killed while this node was
   away, so its secrets (digest copies, keys, package) are removed, its logs kept;
3. runs the container's executor (engine/executor/remote.py) as its child;
4. when the job ends, however it ends (``scancel``'s SIGTERM included), removes, unless a
   newer job of the same container has taken the node's copy over, the container's
   secrets (digest copy, topology keys) at once, then its package once the executor is
   gone. Logs stay (docs/clusters.md, "Logs").

The cleanup job (:func:`cleanup_script`), which ``heron kill`` runs on every node, is the
sweep of step 2 plus the killed topology's own directory.

The comment, ``heron:TOPOLOGY_ID:CONTAINER:INCARNATION``, is how a restarted scheduler
service adopts the jobs it finds and how ``heron kill`` finds them without the service;
a cleanup job's is ``heron-cleanup:TOPOLOGY_ID:NODE``.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.common.launch import LaunchSpec
from engine.common.process.spawn import with_code_root

#: the script's exit code when it refuses the node's work directory (sysexits'
#: EX_CONFIG): the job's output goes nowhere, so the scheduler reads this code instead
UNSAFE_WORK_DIR_EXIT = 78

COMMENT_PREFIX = "heron:"
CLEANUP_COMMENT_PREFIX = "heron-cleanup:"

#: the localfs uploader's directory, which every node mounts (docs/clusters.md)
SHARED_DIR_KEY = "heron.uploader.localfs.file.system.directory"
#: beside the packages in it: one owner-only directory per submission holding its digest
SECRETS_DIR_PREFIX = "secrets-"


def topology_comment_prefix(topology_id: str) -> str:
    """The comment prefix every job of this submission carries."""
    return f"{COMMENT_PREFIX}{topology_id}:"


def job_comment(topology_id: str, container: int, incarnation: int) -> str:
    return f"{topology_comment_prefix(topology_id)}{container}:{incarnation}"


def parse_comment(comment: str, topology_id: str) -> tuple[int, int] | None:
    """(container, incarnation) of a job of this submission, or None."""
    prefix = topology_comment_prefix(topology_id)
    if not comment.startswith(prefix):
        return None
    try:
        container, incarnation = comment[len(prefix):].split(":")
        return int(container), int(incarnation)
    except ValueError:
        return None


def shared_secrets_dir(config: Mapping[str, Any], topology_id: str) -> Path | None:
    """``UPLOADER_DIR/secrets-TOPOLOGY_ID``: where the submission's digest waits for its
    jobs, on the directory every node mounts; None when the cluster has no such directory
    (a localfs uploader)."""
    directory = config.get(SHARED_DIR_KEY)
    if not directory or str(config.get("heron.class.uploader", "localfs")).rsplit(
            ".", 1)[-1].lower() not in ("localfs", "localfilesystemuploader"):
        return None
    return Path(str(directory)).expanduser().resolve() / f"{SECRETS_DIR_PREFIX}{topology_id}"


def shared_secret_file(config: Mapping[str, Any], topology_id: str) -> Path | None:
    directory = shared_secrets_dir(config, topology_id)
    return directory / "zk-auth" if directory is not None else None


def cleanup_comment(topology_id: str, node: str) -> str:
    return f"{CLEANUP_COMMENT_PREFIX}{topology_id}:{node}"


def _base_lines(config: Mapping[str, Any]) -> list[str]:
    """``base=WORK_ROOT/heron-UID``, created owner-only, refused unless it is ours, 700."""
    work_root = config.get("heron.slurm.work.root")
    root = shlex.quote(str(work_root)) if work_root else '"${TMPDIR:-/tmp}"'
    return [
        "umask 077",
        f"base={root}/heron-$(id -u)",
        'mkdir -p -m 700 "$base" 2>/dev/null',
        'if [ -L "$base" ] || [ ! -d "$base" ] || [ ! -O "$base" ]; then',
        '  echo "heron: $base is not a directory owned by user $(id -u); refusing to write '
        'the topology\'s secrets there" >&2',
        f"  exit {UNSAFE_WORK_DIR_EXIT}",
        "fi",
        'mode=$(stat -c %a "$base")',
        'if [ "$mode" != 700 ]; then',
        '  echo "heron: $base has mode $mode, not 700 (owner-only); refusing to write the '
        'topology\'s secrets there" >&2',
        f"  exit {UNSAFE_WORK_DIR_EXIT}",
        "fi",
    ]


#: shell functions: ``scrub_topology DIR`` removes a topology directory's secrets (job
#: directories of earlier versions, each container's secrets, package, project and job
#: marker), keeping its logs; ``sweep`` does it for every topology directory whose shared
#: digest file is gone while the directory holding it is there (a node that does not
#: mount the shared directory right now sweeps nothing)
_SWEEP = [
    'scrub_topology() {',
    '  rm -rf "$1"/job-* "$1"/secret-file',
    '  for c in "$1"/container-*; do',
    '    [ -d "$c" ] && [ ! -L "$c" ] || continue',
    '    rm -rf "$c/secrets" "$c/package.tar.gz" "$c/project" "$c"/project.* "$c/job"',
    '  done',
    '}',
    'sweep() {',
    '  for t in "$base"/*; do',
    '    [ -f "$t/secret-file" ] && [ ! -L "$t" ] || continue',
    '    f=$(cat "$t/secret-file")',
    '    [ -n "$f" ] && [ ! -e "$f" ] && [ -d "$(dirname "$(dirname "$f")")" ] || continue',
    '    scrub_topology "$t" && echo "heron: removed the secrets of ended topology $t"',
    '  done',
    '}',
]


def cleanup_script(config: Mapping[str, Any], topology_id: str) -> str:
    """The script of the job ``heron kill`` runs on a node: the killed topology's
    directory scrubbed (logs kept), and the sweep of every other ended topology's."""
    return "\n".join(["#!/bin/sh", *_base_lines(config), *_SWEEP,
                       f"scrub_topology \"$base\"/{shlex.quote(topology_id)}",
                       "sweep", "exit 0", ""])


def job_script(spec: LaunchSpec, config: Mapping[str, Any], container: int,
               incarnation: int) -> str:
    """The script ``sbatch`` reads on its standard input for one container's job."""
    python = str(config.get("heron.slurm.python") or sys.executable)
    work_root = config.get("heron.slurm.work.root")
    argv = [python, "-m", "engine.executor.remote", "--topology", spec.topology_name,
            "--topology-id", spec.topology_id, "--container", str(container),
            "--package", spec.package_url or "", "--sha256", spec.package_sha256 or "",
            "--zk", spec.state.zk_hosts or "", "--zk-root", spec.state.zk_root,
            "--incarnation", str(incarnation)]
    secret_file = None
    if spec.state.zk_auth_file:
        # the shared copy's path (the submitter wrote it); a launch spec of a cluster with
        # no shared directory (refused at submit) names the submitter's own copy
        secret_file = str(shared_secret_file(config, spec.topology_id)
                          or spec.state.zk_auth_file)
        argv += ["--zk-auth-file", secret_file]
    if config.get("heron.network.bind.interface"):
        argv += ["--bind-interface", str(config["heron.network.bind.interface"])]
    if work_root:
        argv += ["--work-root", str(work_root)]
    code_root = with_code_root({})["PYTHONPATH"]  # this engine, installed or not
    quoted = " ".join(shlex.quote(a) for a in argv)
    lines = [
        "#!/bin/sh",
        *_base_lines(config),
        *_SWEEP,
        "sweep",
        f"topo=\"$base\"/{shlex.quote(spec.topology_id)}",
        f"container=\"$topo\"/container-{container}",
        'mkdir -p "$container/logs" || exit 1',
    ]
    if secret_file is not None:
        # what a later job's sweep reads to know whether this topology still exists
        lines.append(f"echo {shlex.quote(secret_file)} > \"$topo/secret-file\"")
    lines += [
        'echo "$SLURM_JOB_ID" > "$container/job"',
        # the container's copies are this job's unless a newer job took them over
        'ours() { [ "$(cat "$container/job" 2>/dev/null)" = "$SLURM_JOB_ID" ]; }',
        'scrub() { if ours; then rm -rf "$container/secrets"; fi; }',
        'child=""',
        "trap 'scrub; [ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null' TERM INT HUP",
        f"export PYTHONPATH=\"${{PYTHONPATH:+$PYTHONPATH:}}{code_root}\"",
        f"{quoted} >> \"$container/logs/executor-{container}.log\" 2>&1 &",
        "child=$!",
        'wait "$child"',
        "status=$?",
        # a trapped signal ends `wait` early: wait for the executor itself
        'while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done',
        "scrub",
        'if ours; then rm -rf "$container/package.tar.gz" "$container"/project '
        '"$container"/project.* "$container/job"; fi',
        'exit "$status"',
        "",
    ]
    return "\n".join(lines)
