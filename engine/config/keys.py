"""Configuration keys the engine reads and Storm's defaults for them.

Storm's dotted keys are the configuration language (users already know them); Heron's
``topology.reliability.mode`` is accepted as an alias and wins when given. Values are
Storm's ``conf/defaults.yaml`` unless a comment says why we differ. Declared once here
so no role reads a key with a default of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Storm's defaults for the keys the engines read.
STORM_DEFAULTS: dict[str, Any] = {
    "topology.debug": False,
    "topology.workers": 1,
    # None means "one per worker" in Storm; `sparse run` forces 1, and so do we: acking
    # is on unless a user sets 0 (DESIGN, "Reliability semantics").
    "topology.acker.executors": None,
    "topology.message.timeout.secs": 30,
    "topology.max.spout.pending": None,
    "topology.enable.message.timeouts": True,
    "topology.tick.tuple.freq.secs": None,
    "topology.sleep.spout.wait.strategy.time.ms": 1,
    "topology.multilang.serializer": "org.apache.storm.multilang.JsonSerializer",
    "topology.shellbolt.max.pending": 100,
    "topology.subprocess.timeout.secs": None,
    "supervisor.worker.timeout.secs": 30,
    "topology.max.task.parallelism": None,
    "topology.tasks": None,
    "topology.environment": None,
    # Our own keys.
    "topology.tuple.serializer": "msgpack",
    # Bounded executor queues (Storm's executor receive buffer default is 1024).
    "topology.executor.receive.buffer.size": 1024,
}

#: Heron's reliability mode (ATMOST_ONCE, ATLEAST_ONCE, EFFECTIVELY_ONCE)
RELIABILITY_MODE_KEY = "topology.reliability.mode"
ACKERS_KEY = "topology.acker.executors"
MESSAGE_TIMEOUT_KEY = "topology.message.timeout.secs"
MAX_SPOUT_PENDING_KEY = "topology.max.spout.pending"
TIMEOUTS_ENABLED_KEY = "topology.enable.message.timeouts"
TICK_FREQUENCY_KEY = "topology.tick.tuple.freq.secs"

#: how executors run: the topology's name (set by the engine from the plan), its
#: containers, a spout's idle sleep, an executor's inbox bound, a component's task count
#: and Storm's debug switch (DEBUG logs for every task)
NAME_KEY = "topology.name"
WORKERS_KEY = "topology.workers"
SPOUT_WAIT_KEY = "topology.sleep.spout.wait.strategy.time.ms"
RECEIVE_BUFFER_KEY = "topology.executor.receive.buffer.size"
TASKS_KEY = "topology.tasks"
DEBUG_KEY = "topology.debug"
#: ours: how tuple values are serialized ("msgpack", the safe default, or "pickle")
SERIALIZER_KEY = "topology.tuple.serializer"

#: Heron's Stream Manager backpressure watermarks: bytes queued for one destination, and
#: (when set) how long its oldest message may wait, before the spouts pause
HIGH_KEY = "heron.streammgr.network.backpressure.highwatermark.mb"
LOW_KEY = "heron.streammgr.network.backpressure.lowwatermark.mb"
HIGH_MS_KEY = "heron.streammgr.network.backpressure.highwatermark.ms"
LOW_MS_KEY = "heron.streammgr.network.backpressure.lowwatermark.ms"

#: Byte credits between a Stream Manager and its local instances (tuple batches in flight
#: each way; engine.common.network.credits has the mechanism)
BOLT_READ_KEY = "heron.instance.internal.bolt.read.queue.capacity.bytes"
SPOUT_WRITE_KEY = "heron.instance.internal.spout.write.queue.capacity.bytes"
BOLT_WRITE_KEY = "heron.instance.internal.bolt.write.queue.capacity.bytes"
#: Heron's message-count keys: read for nothing here (capacities are in bytes)
HERON_COUNT_KEYS = tuple(f"heron.instance.internal.{kind}.{way}.queue.capacity"
                         for kind in ("bolt", "spout") for way in ("read", "write"))


#: When an instance sends its open batch (Heron's keys; the old bytes key still read)
BATCH_TIME_KEY = "heron.instance.emit.batch.time.ms"
BATCH_BYTES_KEY = "heron.instance.emit.batch.size.bytes"
BATCH_ROWS_KEY = "heron.instance.batch.size"
#: the name this engine used before it took Heron's (still read, with a warning)
OLD_BATCH_BYTES_KEY = "heron.instance.batch.bytes"


#: pystorm's task log settings (a streamparse project's config.json ``log`` section)
LOG_PATH_KEY = "pystorm.log.path"
LOG_FILE_KEY = "pystorm.log.file"
LOG_LEVEL_KEY = "pystorm.log.level"
LOG_FORMAT_KEY = "pystorm.log.format"
LOG_MAX_BYTES_KEY = "pystorm.log.max_bytes"
LOG_BACKUP_COUNT_KEY = "pystorm.log.backup_count"

#: Storm's multi-lang bridge: how long a subprocess may stay silent (its own key, else the
#: worker timeout) and how many tuples a shell bolt may have queued for its subprocess
SUBPROCESS_TIMEOUT_KEY = "topology.subprocess.timeout.secs"
WORKER_TIMEOUT_KEY = "supervisor.worker.timeout.secs"
SHELLBOLT_MAX_PENDING_KEY = "topology.shellbolt.max.pending"

#: Heron's keys for stateful topologies, and our defaults
CHECKPOINT_INTERVAL_KEY = "topology.stateful.checkpoint.interval.seconds"
START_CLEAN_KEY = "topology.stateful.start.clean"
#: beyond Heron: a checkpoint not complete this long after it started is abandoned
CHECKPOINT_TIMEOUT_KEY = "topology.stateful.checkpoint.timeout.secs"
#: Heron's bound on what a Stream Manager holds back while it aligns markers
ALIGNMENT_BUFFER_KEY = "heron.streammgr.stateful.buffer.size.mb"
STORAGE_CLASS_KEY = "heron.statefulstorage.classname"
STORAGE_ROOT_KEY = "heron.statefulstorage.localfs.root.path"
RETENTION_KEY = "heron.statefulstorage.localfs.max.checkpoints"
#: ours: where savepoints go (set by the submitter: beside the checkpoint root on a
#: cluster, under the user's heron home on one machine)
SAVEPOINTS_KEY = "heron.statefulstorage.savepoints.path"
#: ours: the savepoint a topology starts from (``heron submit --from-savepoint``)
FROM_SAVEPOINT_KEY = "heron.stateful.from.savepoint"
#: ours (Flink's maximum parallelism): how many key groups keyed state is split into
KEY_GROUPS_KEY = "topology.stateful.key.groups"

#: Heron's container sizing: room beside the instances for the Stream Manager and the
#: Metrics Manager, and the first-fit packing's largest container and its headroom
PADDING_RAM_KEY = "topology.container.padding.ram"
PADDING_CPU_KEY = "topology.container.padding.cpu"
PADDING_DISK_KEY = "topology.container.padding.disk"
PADDING_PERCENTAGE_KEY = "topology.container.padding.percentage"
MAX_RAM_HINT_KEY = "topology.container.max.ram.hint"
MAX_CPU_HINT_KEY = "topology.container.max.cpu.hint"
MAX_DISK_HINT_KEY = "topology.container.max.disk.hint"


def with_defaults(conf: Mapping[str, Any]) -> dict[str, Any]:
    """Storm's defaults overlaid with ``conf``."""
    merged = dict(STORM_DEFAULTS)
    merged.update(conf)
    return merged
