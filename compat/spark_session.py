"""The one place that configures the local SparkSession this project uses.

Two features run on PySpark: the Summingbird batch platform and the conformance diff.
Both want the same thing from a session on a developer's machine: no web UI (it would
take a port and a thread per session), the driver bound to loopback (nothing listens on
the network), few shuffle partitions (the inputs are small; Spark's default of 200 makes
every join launch 200 tasks; adaptive execution coalesces them further) and quiet logs.
Spark allows one active session per JVM, so callers share it through
:func:`spark_session` rather than building their own.

``master`` is ``local[N]`` or a cluster URL (``spark://HOST:PORT`` for a standalone
cluster). On a cluster the driver listens where ``SPARK_LOCAL_IP`` says (loopback when it
is ``127.0.0.1``, as the tests' cluster runs) and asks for modest executors
(``spark.executor.memory`` 512m unless ``conf`` says otherwise); executors run the same
Python (``PYSPARK_PYTHON``), so this project must be installed where they run. ``conf``
adds or overrides Spark settings (``spark.driver.memory``...); it only takes effect when
this call starts the session.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"


class SparkUnavailable(RuntimeError):
    """PySpark or a Java runtime is missing: the message says which and how to fix it."""


def spark_session(master: str = DEFAULT_MASTER, app_name: str = "heron-storm-compat",
                  shuffle_partitions: int = 4,
                  conf: Mapping[str, str] | None = None) -> SparkSession:
    """The process's SparkSession, started on first use with ``master``.

    A session that already runs is returned as it is (Spark has one per JVM); asking for
    a different master than the running one is an error rather than a silent surprise.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # pragma: no cover - pyspark is a dependency
        raise SparkUnavailable("PySpark is not installed: pip install 'pyspark>=4,<5'") from exc
    active = SparkSession.getActiveSession()
    if active is not None:
        running = active.sparkContext.master
        if running != master:
            raise SparkUnavailable(
                f"a SparkSession with master {running!r} already runs in this process; "
                f"cannot start another with master {master!r}")
        return active
    # The Python workers Spark starts must be this interpreter, with this sys.path.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
               .config("spark.default.parallelism", str(shuffle_partitions))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.ansi.enabled", "false"))
    if master.startswith("local") or os.environ.get("SPARK_LOCAL_IP") == "127.0.0.1":
        builder = (builder.config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1"))
    if not master.startswith("local"):
        builder = builder.config("spark.executor.memory", "512m")
    for key, value in (conf or {}).items():
        builder = builder.config(key, str(value))
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: say why in one line
        raise SparkUnavailable(f"could not start Spark (master {master!r}): "
                               f"{type(exc).__name__}: {exc}; is Java 17+ installed?") from exc
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_jvm_pid(session: SparkSession) -> int | None:
    """The pid of the JVM behind a local session (tests register it as a session-wide
    service so the orphan-process check leaves it alone)."""
    try:
        gateway = session.sparkContext._gateway
        proc = getattr(gateway, "proc", None)
        return proc.pid if proc is not None else None
    except AttributeError:
        return None
