"""The batch script of one container's Slurm job, and the comment that names the job.

The ZooKeeper digest travels inside the script (Slurm keeps a batch script readable by
its owner and Slurm's administrators only): never on a command line, never in the job's
environment, never in the package. On the node the script

1. refuses to write anything unless ``WORK_ROOT/heron-UID`` is a real directory owned by
   this user with mode 700 (another user could otherwise read the digest, or swap the
   directory for a link to theirs);
2. writes the digest owner-only into the job's own directory and runs the container's
   executor (engine/executor/remote.py) as its child;
3. when the job ends, however it ends (``scancel``'s SIGTERM included), removes the job's
   directory and, unless a newer job of the same container has taken the node's copy
   over, the container's secrets (digest copy, topology keys) at once, then its package
   once the executor is gone. Logs stay (docs/clusters.md, "Logs").

The comment, ``heron:TOPOLOGY_ID:CONTAINER:INCARNATION``, is how a restarted scheduler
service adopts the jobs it finds and how ``heron kill`` finds them without the service.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any, Mapping

from engine.launch import LaunchSpec
from engine.process.spawn import with_code_root
from engine.statemgr.zookeeper import read_digest_file

#: the script's exit code when it refuses the node's work directory (sysexits'
#: EX_CONFIG): the job's output goes nowhere, so the scheduler reads this code instead
UNSAFE_WORK_DIR_EXIT = 78

COMMENT_PREFIX = "heron:"


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
    digest = None
    if spec.state.zk_auth_file:
        digest = read_digest_file(spec.state.zk_auth_file)
        argv += ["--zk-auth-file", "$HERON_JOB_DIR/zk-auth"]
    if config.get("heron.network.bind.interface"):
        argv += ["--bind-interface", str(config["heron.network.bind.interface"])]
    if work_root:
        argv += ["--work-root", str(work_root)]
    code_root = with_code_root({})["PYTHONPATH"]  # this engine, installed or not
    quoted = " ".join('"$HERON_JOB_DIR/zk-auth"' if a == "$HERON_JOB_DIR/zk-auth"
                      else shlex.quote(a) for a in argv)
    root = shlex.quote(str(work_root)) if work_root else '"${TMPDIR:-/tmp}"'
    lines = [
        "#!/bin/sh",
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
        f"topo=\"$base\"/{shlex.quote(spec.topology_id)}",
        f"container=\"$topo\"/container-{container}",
        'HERON_JOB_DIR="$topo/job-$SLURM_JOB_ID"',
        'mkdir -p "$HERON_JOB_DIR" "$container/logs" || exit 1',
        'echo "$SLURM_JOB_ID" > "$container/job"',
        # the container's copies are this job's unless a newer job took them over
        'ours() { [ "$(cat "$container/job" 2>/dev/null)" = "$SLURM_JOB_ID" ]; }',
        'scrub() { rm -rf "$HERON_JOB_DIR"; if ours; then rm -rf "$container/secrets"; fi; }',
        'child=""',
        "trap 'scrub; [ -n \"$child\" ] && kill -TERM \"$child\" 2>/dev/null' TERM INT HUP",
    ]
    if digest is not None:
        lines += ['cat > "$HERON_JOB_DIR/zk-auth" <<\'HERON_DIGEST_END\'', digest,
                  "HERON_DIGEST_END"]
    lines += [
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
