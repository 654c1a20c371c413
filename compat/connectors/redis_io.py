"""Redis in and out: :class:`RedisStreamSpout` (a replayable source over a Redis stream)
and :class:`RedisSink` (an exactly-once sink: buffered writes applied with a checkpoint
fence in one ``MULTI``/``EXEC``).

Both need the ``redis`` client (``pip install 'heron-storm-compat[redis]'``), imported
only when a component starts, so the rest of ``compat.connectors`` works without it.
Both read ``heron.connectors.redis.url`` (default ``redis://127.0.0.1:6379/0``; a
``rediss://`` URL, a password or a database number go in it as redis-py's ``from_url``
takes them) and ``heron.connectors.redis.timeout.secs`` (default 10: a socket operation
slower than this fails the task, which the restore then repeats).
"""
from __future__ import annotations

import json
from typing import Any

from compat.storm_api.config import RELIABILITY_MODE_KEY
from compat.storm_api.spout import Spout
from compat.storm_api.state import HashMapState, State, StatefulComponent, TwoPhaseCommitBolt
from compat.storm_api.tuple import Tuple

from .config import ConnectorConfigError, checkpoint_number, setting, task_slice

__all__ = ["RedisStreamSpout", "RedisSink", "connect"]

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def connect(component: Any) -> Any:
    """A redis-py client for the component's ``heron.connectors.redis.url``, answering str
    (UTF-8). The connection is made on first use."""
    url = setting(component, "heron.connectors.redis.url", "str", DEFAULT_URL)
    timeout = setting(component, "heron.connectors.redis.timeout.secs", "int", 10, minimum=1)
    try:
        import redis
    except ImportError:
        raise RuntimeError(f"{type(component).__name__} needs the redis client: "
                           "pip install 'heron-storm-compat[redis]'") from None
    try:
        return redis.Redis.from_url(url, decode_responses=True, socket_timeout=timeout,
                                    socket_connect_timeout=timeout)
    except ValueError as exc:
        raise ConnectorConfigError(f"{type(component).__name__}: config key "
                                   f"'heron.connectors.redis.url': {exc}") from exc


def _output_names(outputs: Any) -> list[str]:
    """The default stream's field names of a streamparse ``outputs`` attribute."""
    names: list[str] = []
    for output in outputs or []:
        if isinstance(output, str):
            names.append(output)
        elif getattr(output, "name", "default") == "default":
            names.extend(output.fields)
    return names


class RedisStreamSpout(StatefulComponent, Spout):
    """Emits the entries of a Redis stream, in id order, once each.

    Guarantee: under ``EFFECTIVELY_ONCE`` every entry is reflected exactly once in the
    topology's state and two-phase-commit sinks: the id of the last entry emitted lives in
    this task's state, and a restored task reads on from the entry after it (``XREAD``
    ``COUNT``-bounded, never consuming: the stream is left as it is, so a replay finds the
    entries again; trim it only behind the position of the newest consistent checkpoint).
    In the other modes nothing is saved: a restarted task starts again from
    ``heron.connectors.redis.stream.start``.

    What is emitted: the class's ``outputs`` name the fields (default ``["entry_id",
    "fields"]``). An output field named like a field of the entry gets that field's value
    (None when the entry lacks it); otherwise ``entry_id`` gets the entry's id and
    ``fields`` a dict of all its fields. A subclass sets ``outputs = ["word"]`` to emit
    one field, or overrides ``entry_values(entry_id, fields)`` (return None to skip an
    entry). Values are str (entries must be UTF-8).

    Config keys (and ``heron.connectors.redis.url`` / ``.timeout.secs``, above):

    * ``heron.connectors.redis.stream.key`` (required): the stream. With more than one
      task it must contain ``{task_index}`` (0, 1, ...): each task reads its own stream, as
      a stream has no partitions to share out.
    * ``heron.connectors.redis.stream.start`` (default ``0``): where a task with no saved
      position starts: ``0`` the beginning, ``$`` after the newest entry there when the
      task first starts (under ``EFFECTIVELY_ONCE`` taken once and kept, so also a
      rollback to empty state replays from it: below), or an entry id to start after.
    * ``heron.connectors.redis.stream.count`` (default 100): most entries per read.
    * ``heron.connectors.redis.stream.block.ms`` (default 0: do not block): wait up to this
      long (at most 1000, ``next_tuple`` must return soon) for new entries.
    * ``heron.connectors.redis.stream.finite`` (default false): when true, the spout is
      exhausted (``is_exhausted()``) the first time a read finds no new entry.
    * ``heron.connectors.redis.stream.end.field`` (default none): an entry having this field
      marks the end of the stream; it is not emitted and the spout is exhausted from then
      on (also after a restore).

    ``stream.start: $`` under ``EFFECTIVELY_ONCE``: a failure before the topology's first
    consistent checkpoint (or with every checkpoint unreadable) rolls back to *empty*
    state, and the entries emitted before it, and those added since, must be emitted
    again. Taking ``$`` afresh would skip them, and the position cannot be kept in this
    task's state (the rollback empties it) nor in a checkpoint (a component cannot force
    one, and the entries are emitted before the first). So the first start resolves ``$``
    to the newest entry's id (``0-0`` for an empty stream) and stores it in Redis, beside
    the stream it indexes, before the first entry is emitted: the string
    ``heron:stream.start:<submission>:<component>:<task index>:<stream key>``, written
    with ``SET NX``, so every later start with empty state reads the first one's value.
    ``<submission>`` is Storm's ``storm.id``, the id of one submission (the engines set
    it): a new ``heron submit`` of the topology takes ``$`` afresh, as a user expects,
    while restarts, rollbacks and ``heron update`` within a submission keep it. The key
    is small and never expires; delete ``heron:stream.start:*`` keys of killed topologies
    at will. In the other modes nothing is stored and a restarted task takes ``$``
    again.
    """

    outputs = ["entry_id", "fields"]

    #: where the position lives in the task's state: {"last_id": id, "ended": bool}
    POSITION_KEY = "heron.connectors.redis.stream.position"

    state: State

    def init_state(self, stateful_state: State) -> None:
        """Keep the state; the position is read in ``initialize``."""
        self.state = stateful_state

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        if not hasattr(self, "state"):
            self.state = HashMapState()
        key = setting(self, "heron.connectors.redis.stream.key", "str")
        index, count = task_slice(self)
        if count > 1 and "{task_index}" not in key:
            raise ConnectorConfigError(
                f"{type(self).__name__}: config key 'heron.connectors.redis.stream.key' must "
                f"contain {{task_index}} when the component has {count} tasks (each task "
                f"reads its own stream), not {key!r}")
        self._key = key.replace("{task_index}", str(index))
        self._task_index = index
        self._count = setting(self, "heron.connectors.redis.stream.count", "int", 100,
                              minimum=1)
        block = setting(self, "heron.connectors.redis.stream.block.ms", "int", 0, minimum=0)
        if block > 1000:
            raise ConnectorConfigError(
                f"{type(self).__name__}: config key 'heron.connectors.redis.stream.block.ms' "
                f"must be at most 1000 (next_tuple must return soon), not {block}")
        self._block = block or None  # redis-py: block=0 would wait forever
        self._finite = setting(self, "heron.connectors.redis.stream.finite", "bool", False)
        self._end_field = setting(self, "heron.connectors.redis.stream.end.field", "str", None)
        start = setting(self, "heron.connectors.redis.stream.start", "str", "0")
        self._names = _output_names(self.outputs)
        self._client = connect(self)
        position = self.state.get(self.POSITION_KEY)
        if position:
            self._last_id = str(position["last_id"])
            self._ended = bool(position.get("ended", False))
        else:
            self._last_id = self._start_id(start)
            self._ended = False
        self._drained = False
        self._save_position()

    def _start_id(self, start: str) -> str:
        if start != "$":
            return "0-0" if start == "0" else start
        newest = self._client.xrevrange(self._key, "+", "-", count=1)
        resolved = newest[0][0] if newest else "0-0"
        conf = getattr(self, "storm_conf", None) or {}
        if str(conf.get(RELIABILITY_MODE_KEY, "")).upper() != "EFFECTIVELY_ONCE":
            return resolved  # nothing is saved: a restarted task takes $ again
        record = self.start_record_key()
        self._client.set(record, resolved, nx=True)  # the first start's value wins
        kept = self._client.get(record)
        return str(kept) if kept is not None else resolved

    def start_record_key(self) -> str:
        """The Redis key holding what ``stream.start: $`` resolved to for this task
        (see the class docstring)."""
        conf = getattr(self, "storm_conf", None) or {}
        component = self.component_name or type(self).__name__
        submission = conf.get("storm.id") or conf.get("topology.name", "")
        return f"heron:stream.start:{submission}:{component}:{self._task_index}:{self._key}"

    def _save_position(self) -> None:
        self.state[self.POSITION_KEY] = {"last_id": self._last_id, "ended": self._ended}

    def entry_values(self, entry_id: str, fields: dict[str, str]) -> list[Any] | None:
        """The values to emit for one entry (None: emit nothing for it)."""
        values: list[Any] = []
        for name in self._names:
            if name in fields:
                values.append(fields[name])
            elif name == "entry_id":
                values.append(entry_id)
            elif name == "fields":
                values.append(dict(fields))
            else:
                values.append(None)
        return values

    def next_tuple(self) -> None:
        if self._ended or self._drained:
            return
        answer = self._client.xread({self._key: self._last_id}, count=self._count,
                                    block=self._block)
        entries = answer[0][1] if answer else []
        if not entries:
            self._drained = self._finite
            return
        for entry_id, fields in entries:
            self._last_id = entry_id
            if self._end_field is not None and self._end_field in fields:
                self._ended = True
                break
            values = self.entry_values(entry_id, fields)
            if values is not None:
                self.emit(values)
        self._save_position()

    def pre_save(self, checkpoint_id: str) -> None:
        self._save_position()

    def is_exhausted(self) -> bool:
        return self._ended or self._drained

    def _close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()


#: the write kinds RedisSink knows
SINK_KINDS = ("list", "hash", "hincrby")


class RedisSink(TwoPhaseCommitBolt):
    """Writes each input tuple to Redis, exactly once, in one transaction per checkpoint.

    Guarantee: under ``EFFECTIVELY_ONCE`` every tuple the topology's consistent checkpoints
    account for is written exactly once, whatever fails. The writes of one checkpoint
    interval are buffered in this bolt (then kept in its state as the prepared
    transaction, so a restore finds them); when the checkpoint is consistent across the
    topology ``commit`` applies them together with a fence, the hash
    ``fence:<sink>:<task>`` (fields ``checkpoint``: the last committed checkpoint id,
    ``number``: its number, ``records``), in one ``MULTI``/``EXEC`` under ``WATCH`` of the
    fence. A commit whose checkpoint the fence already covers changes nothing, so the
    re-commit a restore runs is harmless, and readers see a transaction's writes all at
    once or not at all. Aborted transactions write nothing. The writes to commit stay in
    this bolt's state until then, so state grows with the tuples of one checkpoint interval.
    Two cases escape: a command Redis rejects inside the ``EXEC`` (the key holds another
    type) fails the task after the other commands applied (Redis has no rollback), and a
    restore that falls back past a committed checkpoint skips the replayed one's writes.
    Checkpoint ids must end in a growing number (``ckpt-<n>``), as engines make them.

    Config keys (and ``heron.connectors.redis.url`` / ``.timeout.secs``, above):

    * ``heron.connectors.redis.sink.key`` (required): the key written to.
    * ``heron.connectors.redis.sink.kind`` (default ``list``): ``list`` appends each tuple
      (``RPUSH``, the JSON of its values); ``hash`` sets a field (``HSET key values[0]
      values[1]``: the last write of a field wins); ``hincrby`` adds to a field
      (``HINCRBY key values[0] values[1]``, an int or a string of one, 1 when there is
      no second value: a count).
    * ``heron.connectors.redis.sink.name`` (default the component's name): names the
      fence; two sinks writing the same Redis need two names.

    A subclass changes what is written by overriding ``to_write(tup)``: a list of
    arguments for the kind's command after the key (``[value]`` for ``list``, ``[field,
    value]`` for ``hash``, ``[field, amount]`` for ``hincrby``), str or int.
    """

    def _setup(self) -> None:
        if getattr(self, "_client", None) is not None:
            return
        self._kind = setting(self, "heron.connectors.redis.sink.kind", "str", "list",
                             choices=SINK_KINDS)
        self._key = setting(self, "heron.connectors.redis.sink.key", "str")
        name = setting(self, "heron.connectors.redis.sink.name", "str",
                       self.component_name or type(self).__name__)
        self._fence = f"fence:{name}:{self.task_id if self.task_id is not None else 0}"
        self._ops: list[list[Any]] = []
        self._client = connect(self)

    def to_write(self, tup: Tuple) -> list[Any]:
        """The command arguments after the key for ``tup`` (see the class docstring)."""
        values = list(tup.values)
        if self._kind == "list":
            return [json.dumps(values, ensure_ascii=False, separators=(",", ":"))]
        if not values:
            raise ValueError(f"{type(self).__name__} ({self._kind}): a tuple with no values")
        field = values[0] if isinstance(values[0], str) else json.dumps(values[0])
        if self._kind == "hash":
            if len(values) < 2:
                raise ValueError(f"{type(self).__name__} (hash): needs (field, value), "
                                 f"got {values!r}")
            value = values[1]
            return [field, value if isinstance(value, (str, int, float)) and not
                    isinstance(value, bool) else json.dumps(value)]
        amount = values[1] if len(values) > 1 else 1
        if isinstance(amount, str) and amount.strip().lstrip("-").isdigit():
            amount = int(amount)  # what a Redis stream's entries hold
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise ValueError(f"{type(self).__name__} (hincrby): the amount must be an "
                             f"integer, got {amount!r}")
        return [field, amount]

    def begin(self) -> None:
        self._setup()
        self._ops = []

    def process(self, tup: Tuple) -> None:
        self._ops.append(list(self.to_write(tup)))

    def pre_commit(self, checkpoint_id: str) -> Any:
        """The buffered writes, with where they go: {"kind", "key", "ops"} (kept in state
        until committed), or None when there are none."""
        if not self._ops:
            return None
        # the fence goes with the writes: after a rescale another task may commit them
        prepared = {"kind": self._kind, "key": self._key, "ops": self._ops,
                    "fence": self._fence}
        self._ops = []
        return prepared

    def commit(self, checkpoint_id: str, prepared: Any) -> None:
        """Apply the writes and move the fence in one MULTI/EXEC, unless the fence shows
        this checkpoint committed already."""
        if not prepared:
            return
        self._setup()
        number = checkpoint_number(checkpoint_id)
        if number is None:
            raise ValueError(f"{type(self).__name__}: checkpoint id {checkpoint_id!r} does "
                             "not end in a number; the fence cannot order it")
        import redis

        kind, key, ops = prepared["kind"], prepared["key"], prepared["ops"]
        fence = prepared.get("fence", self._fence)
        with self._client.pipeline(transaction=True) as pipe:
            for _attempt in range(100):
                try:
                    pipe.watch(fence)
                    done = pipe.hget(fence, "number")
                    if done is not None and int(done) >= number:
                        pipe.unwatch()
                        return
                    pipe.multi()
                    for op in ops:
                        if kind == "list":
                            pipe.rpush(key, op[0])
                        elif kind == "hash":
                            pipe.hset(key, op[0], op[1])
                        else:
                            pipe.hincrby(key, op[0], int(op[1]))
                    pipe.hset(fence, mapping={"checkpoint": checkpoint_id,
                                                    "number": number, "records": len(ops)})
                    pipe.execute()
                    return
                except redis.WatchError:
                    continue
        raise RuntimeError(f"{type(self).__name__}: the fence {fence} kept changing "
                           "under the commit (another writer uses this sink's name)")

    def abort(self) -> None:
        self._ops = []

    def _close(self) -> None:
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
