"""The Slurm client commands (sbatch, scancel, squeue, scontrol, sinfo), bounded in time,
their failures as :class:`SlurmError` with one line naming the command and why.

Kept apart from the scheduler so that ``heron kill`` can find and cancel a topology's jobs
(by the comment every job carries, engine/scheduler/slurm/jobscript.py) when the
scheduler service is gone, without loading the scheduler.
"""

from __future__ import annotations

import os
import subprocess

from engine.common.process import PARENT_PID_ENV

#: job states that mean "not running and will not run by itself"
ENDED_JOB_STATES = ("BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                    "OUT_OF_MEMORY", "PREEMPTED", "TIMEOUT", "SPECIAL_EXIT", "REVOKED")


class SlurmError(Exception):
    """A Slurm command failed or did not answer; the text names the command and why.
    ``unsatisfiable``: Slurm says the request can never run (no node that big, no such
    partition), so retrying is pointless and the submitter must change it."""

    unsatisfiable = False


class SlurmUnsatisfiable(SlurmError):
    unsatisfiable = True


#: what sbatch says when no node of the cluster could ever run the job
_NEVER = ("Requested node configuration is not available", "Invalid partition",
          "More processors requested than permitted", "Node count specification invalid",
          "Memory required by task is not available", "invalid partition specified")


class SlurmCommands:
    """The Slurm client commands, bounded in time, their failures as SlurmError."""

    def __init__(self, *, conf: str | None = None, timeout: float = 30.0) -> None:
        self.env = dict(os.environ)
        # sbatch hands its environment to the job: a supervised service's parent pid
        # would make every container's executor think its parent died
        self.env.pop(PARENT_PID_ENV, None)
        if conf:
            self.env["SLURM_CONF"] = conf
        self.timeout = timeout

    def run(self, argv: list[str], *, stdin: str | None = None) -> str:
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                  timeout=self.timeout, env=self.env)
        except FileNotFoundError:
            raise SlurmError(f"{argv[0]}: not found; install Slurm's client commands "
                             f"(Debian: slurm-client) on this machine") from None
        except subprocess.TimeoutExpired:
            raise SlurmError(f"{' '.join(argv[:2])}: the Slurm controller did not answer "
                             f"within {self.timeout:g}s") from None
        if done.returncode != 0:
            message = (done.stderr or done.stdout).strip().splitlines()
            raise SlurmError(f"{' '.join(argv[:2])} failed (exit {done.returncode}): "
                             f"{message[-1] if message else 'no output'}")
        return done.stdout

    def sbatch(self, script: str, options: list[str]) -> str:
        try:
            out = self.run(["sbatch", "--parsable", *options], stdin=script).strip()
        except SlurmError as exc:
            if any(text.lower() in str(exc).lower() for text in _NEVER):
                raise SlurmUnsatisfiable(f"{exc} (options: {' '.join(options)})") from None
            raise
        job_id = out.split(";")[0]
        if not job_id.isdigit():
            raise SlurmError(f"sbatch answered {out!r}, not a job id")
        return job_id

    def scancel(self, job_ids: list[str]) -> None:
        if job_ids:
            self.run(["scancel", *job_ids])

    def jobs(self, job_ids: list[str]) -> dict[str, tuple[str, str, str]]:
        """job id -> (state, node list, reason) for the jobs Slurm still lists."""
        if not job_ids:
            return {}
        out = self.run(["squeue", "--noheader", "--states=all", f"--jobs={','.join(job_ids)}",
                        "--format=%i|%T|%N|%r"]) if job_ids else ""
        found = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 4:
                found[parts[0]] = (parts[1], parts[2], parts[3])
        return found

    def topology_jobs(self, comment_prefix: str) -> dict[str, tuple[str, str, str]]:
        """job id -> (state, node list, comment) of this user's jobs whose comment starts
        with ``comment_prefix``, ended ones included while Slurm still lists them."""
        out = self.run(["squeue", "--noheader", "--states=all", f"--user={os.getuid()}",
                        "--format=%i|%T|%N|%k"])
        found = {}
        for line in out.splitlines():
            parts = line.strip().split("|", 3)
            if len(parts) == 4 and parts[3].startswith(comment_prefix):
                found[parts[0]] = (parts[1], parts[2], parts[3])
        return found

    def set_excluded(self, job_id: str, nodes: list[str]) -> None:
        """Change a pending job's excluded nodes."""
        self.run(["scontrol", "update", f"JobId={job_id}", f"ExcNodeList={','.join(nodes)}"])

    def job_state(self, job_id: str) -> tuple[str, str]:
        """(state, node) of a job squeue no longer lists, from the controller's memory
        (``scontrol show job``); ("GONE", "") when it forgot it too."""
        try:
            out = self.run(["scontrol", "--oneliner", "show", "job", job_id])
        except SlurmError:
            return "GONE", ""
        fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
        return fields.get("JobState", "GONE"), fields.get("NodeList", "")

    def exit_code(self, job_id: str) -> int | None:
        """The exit code of an ended job's script (``scontrol show job``'s ExitCode
        ``CODE:SIGNAL``), None when the controller no longer knows the job."""
        try:
            out = self.run(["scontrol", "--oneliner", "show", "job", job_id])
        except SlurmError:
            return None
        fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
        code, _, _ = fields.get("ExitCode", "").partition(":")
        return int(code) if code.isdigit() else None

    def node_states(self) -> dict[str, str]:
        """node -> its state (lower case, flags such as '*' for not responding kept)."""
        out = self.run(["sinfo", "--noheader", "--Node", "--format=%N|%t"])
        states = {}
        for line in out.splitlines():
            parts = line.strip().split("|")
            if len(parts) == 2:
                states[parts[0]] = parts[1].lower()
        return states
