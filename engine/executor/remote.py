"""``python -m engine.executor.remote ...``: start one container on a cluster node.

What a cluster manager (a Slurm job, a Kubernetes pod) runs on the node it picked. It
turns what the scheduler hands it into what ``python -m engine.executor`` needs, then
becomes that executor (``exec``: the cluster manager sees one process tree, and killing
the job kills the container):

1. a private working directory on the node (``--work-root``, default the node's temporary
   directory), never a path on the submitting machine;
2. the topology package fetched from ``--package`` and checked against ``--sha256``
   before anything is unpacked (engine/common/cluster/package.py), refused when another engine
   version packed it;
3. the state manager (ZooKeeper: ``--zk``, ``--zk-root``, and the digest from
   ``--zk-auth-file``, which must be owner-only, copied owner-only into the working
   directory's ``secrets/``; on Slurm that file is the submitter's copy on the shared
   directory, so the digest is never in the job's script, arguments or environment);
4. the topology's keys, from ``--keys-file`` (a mounted Kubernetes Secret) or from the
   digest-protected ``keys/NAME`` node, written owner-only beside the launch file;
5. the project's virtual environment (``virtualenvs/*.txt``), built once per node;
6. a launch file for this node: the submission's settings from the package, this node's
   address (``--bind-host``, or the first address of ``--bind-interface``) and the
   container's incarnation. A Flux submission names the YAML file inside the package and
   the package's include folder (a heronpy submission names its definition at the
   package's root), so every process of the container rebuilds the
   submitter's topology from the unpacked files with the recorded substitution values,
   and its shell components start in the unpacked ``resources/``.

Every failure is one line on stderr naming what failed (the job's log), exit status 2
for what a retry cannot fix (a package or key mismatch) and 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from engine.common.cluster.package import (
    DEFINITION_SUFFIX,
    FluxContents,
    PackageError,
    unpack_package,
)
from engine.common.cluster.venv import VirtualenvError, ensure_virtualenv, requirements_file
from engine.common.launch import LaunchSpec, StateManagerSpec, Submission
from engine.common.security.keys import KeysError, TopologyKeys, keys_from_state
from engine.common.security.private import (
    UnsafePathError,
    private_dir,
    read_private_file,
    write_private_file,
)
from engine.common.submission import shell_dir_of
from engine.uploader import fetch

#: settings of the submitter's launch spec that a node's launch spec keeps
PORTABLE_SETTINGS = ("multilang", "multilang_serializer", "capture_all", "capture_all_streams",
                     "restart_backoff_initial_ms", "restart_backoff_max_ms",
                     "restart_reset_secs", "cluster", "scheduler")


class ContainerStartError(Exception):
    """The container cannot start on this node; ``fatal`` when retrying cannot help."""

    def __init__(self, message: str, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


def launch_manifest(spec: LaunchSpec, flux: FluxContents | None = None) -> dict[str, Any]:
    """What a package carries of the submitter's launch spec (engine/common/cluster/package.py):
    the submission with its paths made relative to the package, and the settings above.
    A Flux submission (``flux``: what its package holds) names its YAML file and the
    package's include directory (``flux_cwd``) instead: the submitter's paths mean nothing
    on a node, and the recorded substitution values stay as they are."""
    submission = dict(vars(spec.submission))
    project = Path(submission["project"])
    if (flux is None) != (submission.get("flux_values") is None):
        raise PackageError(f"{project}: a Flux submission is packed with its Flux files "
                           f"(engine/common/cluster/package.py flux_contents), and only a Flux "
                           f"submission is")
    if flux is not None:
        submission["project"], submission["flux_cwd"] = flux.yaml, flux.cwd
        submission["config_file"] = flux.config_file
    elif project.suffix == DEFINITION_SUFFIX:  # a heronpy definition at the package's root
        submission["project"] = project.name
        if submission.get("config_file"):
            submission["config_file"] = f"config/{Path(submission['config_file']).name}"
    else:
        config_file = submission.get("config_file")
        if config_file:
            try:
                submission["config_file"] = str(Path(config_file).resolve().relative_to(
                    project.resolve()))
            except ValueError:
                raise PackageError(f"{config_file}: a cluster submission's config file must "
                                   f"be inside the project ({project})") from None
        submission["project"] = "."
    return {"topology": spec.topology_name, "topology_id": spec.topology_id,
            "submission": submission,
            "settings": {key: getattr(spec, key) for key in PORTABLE_SETTINGS}}


def unpacked_submission(manifest: dict[str, Any], project: Path) -> Submission:
    """The submission of a package's ``manifest`` (:func:`launch_manifest`) with its paths
    inside ``project``, where the package was unpacked: the project (``.`` or a Flux
    file), the config file and a Flux submission's include folder."""
    submission = dict(manifest["submission"])
    submission["project"] = str(project / submission["project"])
    for key in ("config_file", "flux_cwd"):
        if submission.get(key):
            submission[key] = str(project / submission[key])
    return Submission(**submission)


def address_of(interface: str) -> str:
    """The first IPv4 address of a network interface (``heron.network.bind.interface``)."""
    import psutil

    for addr in psutil.net_if_addrs().get(interface, []):
        if addr.family == socket.AF_INET:
            return addr.address
    raise ContainerStartError(f"network interface {interface!r} has no IPv4 address on "
                              f"{socket.gethostname()} (interfaces: "
                              f"{', '.join(sorted(psutil.net_if_addrs()))})", fatal=True)


def prepare(args: argparse.Namespace) -> LaunchSpec:
    """Steps 1-6 of the module docstring; returns the saved launch spec."""
    work_root = Path(args.work_root or os.environ.get("HERON_WORK_ROOT")
                     or tempfile.gettempdir())
    try:
        base = private_dir(work_root / f"heron-{os.getuid()}")
        work = private_dir(base / args.topology_id / f"container-{args.container}")
    except UnsafePathError as exc:
        raise ContainerStartError(str(exc), fatal=True) from None

    # 2. the package, checked, unpacked beside the previous start's copy then swapped in
    archive = work / "package.tar.gz"
    try:
        fetch(args.package, archive)
        fresh = work / f"project.{os.getpid()}"
        manifest = unpack_package(archive, args.sha256, fresh)
    except PackageError as exc:
        raise ContainerStartError(str(exc), fatal="SHA-256" in str(exc) or "engine version"
                                  in str(exc)) from None
    project = work / "project"
    shutil.rmtree(project, ignore_errors=True)
    os.replace(fresh, project)
    if manifest.get("topology") != args.topology or manifest.get("topology_id") != args.topology_id:
        raise ContainerStartError(f"{args.package}: a package of {manifest.get('topology_id')}, "
                                  f"not of {args.topology_id}", fatal=True)

    # 3. the state manager
    zk_auth_copy = None
    if args.zk_auth_file:
        try:
            digest = read_private_file(args.zk_auth_file)
        except (OSError, UnsafePathError) as exc:
            raise ContainerStartError(f"--zk-auth-file {args.zk_auth_file}: {exc}",
                                      fatal=True) from None
        zk_auth_copy = str(write_private_file(work / "secrets" / "zk-auth", digest))
    state_spec = StateManagerSpec(kind="zookeeper", zk_hosts=args.zk, zk_root=args.zk_root,
                                  zk_auth_file=zk_auth_copy)

    # 4. the keys
    try:
        if args.keys_file:
            keys = TopologyKeys.from_file(args.keys_file, topology_id=args.topology_id)
        else:
            with state_spec.open() as state:
                keys = keys_from_state(state, args.topology)
            if keys.topology_id != args.topology_id:
                raise KeysError(f"keys/{args.topology}: keys of {keys.topology_id}, not of "
                                f"{args.topology_id} (resubmitted meanwhile?)")
    except KeysError as exc:
        raise ContainerStartError(str(exc), fatal=True) from None
    except Exception as exc:  # the state manager did not answer
        raise ContainerStartError(f"cannot read the topology's keys from "
                                  f"{state_spec.describe()}: {exc}") from None
    keys.save(work)

    # 5. the environment (a Flux file's project files are beside it)
    submission = unpacked_submission(manifest, project)
    home = Path(submission.project)
    if submission.flux_values is not None or home.suffix == DEFINITION_SUFFIX:
        home = home.parent
    python = sys.executable
    requirements = requirements_file(home, args.topology)
    if requirements is not None:
        try:
            python = str(ensure_virtualenv(requirements, base / "venvs"))
        except VirtualenvError as exc:
            raise ContainerStartError(str(exc)) from None

    # 6. the launch spec of this node
    bind_host = args.bind_host or (address_of(args.bind_interface) if args.bind_interface
                                   else socket.gethostbyname(socket.gethostname()))
    spec = LaunchSpec(topology_name=args.topology, topology_id=args.topology_id,
                      working_dir=str(work), submission=submission,
                      state=state_spec, python=python,
                      shell_cwd=str(shell_dir_of(submission.project)),
                      bind_host=bind_host, incarnation=args.incarnation,
                      package_url=args.package, package_sha256=args.sha256,
                      **manifest.get("settings", {}))
    spec.save()
    return spec


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m engine.executor.remote",
                                     description="Start one container of a topology on this "
                                                 "cluster node.")
    parser.add_argument("--topology", required=True)
    parser.add_argument("--topology-id", required=True)
    parser.add_argument("--container", type=int, required=True)
    parser.add_argument("--package", required=True, help="file:// or http(s):// URL")
    parser.add_argument("--sha256", required=True)
    parser.add_argument("--zk", required=True, help="ZooKeeper host:port[,host:port]")
    parser.add_argument("--zk-root", default="/heron")
    parser.add_argument("--zk-auth-file", help="owner-only file holding the digest user:password")
    parser.add_argument("--keys-file", help="the topology's keys (else read from ZooKeeper)")
    parser.add_argument("--bind-host", help="address this container binds and publishes")
    parser.add_argument("--bind-interface", help="bind the first IPv4 address of this interface")
    parser.add_argument("--incarnation", type=int, default=0)
    parser.add_argument("--work-root", help="where the working directory goes (node-local)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        spec = prepare(args)
    except ContainerStartError as exc:
        print(f"heron container {args.container} of {args.topology}: {exc}", file=sys.stderr,
              flush=True)
        return 2 if exc.fatal else 1
    argv = [sys.executable, "-m", "engine.executor", "--launch", str(spec.path),
            "--container", str(args.container)]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    sys.exit(main())
