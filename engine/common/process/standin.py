"""A harmless stand-in for an engine process, for tests and dry runs.

``python -m engine.common.process.standin --launch PATH [--container N] [--task T]`` behaves
like the real processes as far as supervision is concerned: it calls
``die_with_parent()``, logs one line, and runs until SIGTERM/SIGINT, then exits 0.
``HERON_STANDIN_EXIT_AFTER=SECS`` makes it exit (status 3) after SECS seconds instead,
to exercise restart policies. Point the executor or scheduler at it with
``HERON_MODULE_OVERRIDES`` (see engine.executor.commands).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from engine.common.process.parent import die_with_parent


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    parser = argparse.ArgumentParser(prog="standin")
    parser.add_argument("--launch")
    parser.add_argument("--container", type=int)
    parser.add_argument("--task", type=int)
    args, _ = parser.parse_known_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"standin pid={os.getpid()} ppid={os.getppid()} container={args.container} "
          f"task={args.task}", flush=True)
    exit_after = os.environ.get("HERON_STANDIN_EXIT_AFTER")
    if exit_after and stop.wait(float(exit_after)) is False:
        return 3
    while not stop.wait(0.5):
        pass
    print("standin stopping", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
