"""Sources and sinks that keep the effectively-once promise (docs/stateful.md).

Under ``topology.reliability.mode: EFFECTIVELY_ONCE`` acking is off and a failure rolls
the whole topology back to its newest consistent checkpoint, so a source must be able to
go back to where that checkpoint was taken, and a sink must put into the outside world
exactly what the checkpoints account for. These components do, with streamparse's API:

* :class:`FileSpout`: lines of text files; position (file, byte offset) in state.
* :class:`RedisStreamSpout`: entries of a Redis stream; position (last entry id) in state.
* :class:`FileSink`: one line per tuple, in files made visible by rename on commit.
* :class:`RedisSink`: list appends, hash sets or counts, applied with a checkpoint fence
  in one ``MULTI``/``EXEC``.

Every setting is a Storm config key ``heron.connectors.<connector>.<setting>``
(:mod:`compat.connectors.config`); a missing or malformed one fails the task at start with
:class:`ConnectorConfigError` naming it::

    from compat.connectors import FileSink, FileSpout

    class Lines(FileSpout):
        config = {"heron.connectors.file.path": "input/*.txt"}

    class Out(FileSink):
        config = {"heron.connectors.file.sink.dir": "output"}

This package imports ``compat.storm_api`` only (never an engine); the Redis components
import the ``redis`` client when they start (the ``redis`` extra).
"""
from compat.connectors.config import ConnectorConfigError
from compat.connectors.files import FileSink, FileSpout, committed_files, read_committed
from compat.connectors.redis_io import RedisSink, RedisStreamSpout

__all__ = ["ConnectorConfigError", "FileSink", "FileSpout", "RedisSink", "RedisStreamSpout",
           "committed_files", "read_committed"]
