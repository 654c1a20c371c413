"""The engine's runtime configuration: every key a role reads, its default, and its check.

Each role (Stream Manager, Topology Master, instance, local engine) reads its settings
from here as frozen, typed values, parsed once with one-line errors naming the key.
``compat.storm_api.config`` re-exports what users import (the keys, ``with_defaults``,
``reliability``, ``checkpointing``, ``ConfigError``), so the user API no longer parses
runtime keys and the engine no longer reads its own configuration through the user API.
Modules: ``keys`` (names and defaults), ``errors``, ``values`` (shared checks),
``reliability`` (acking, timeouts, ticks), ``checkpointing`` (stateful topologies),
``execution`` (spout wait, receive buffer, tasks, workers, serializer, debug),
``multilang`` (the shell bridge's timeouts and pending bound), ``task_logs`` (pystorm's
per-task log settings), ``batching`` (when an instance sends its open batch), ``credits``
(bytes in flight between a Stream Manager and its instances), ``backpressure`` (the Stream
Manager's watermarks).
"""
