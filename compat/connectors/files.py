"""Files in and out: :class:`FileSpout` (a replayable source) and :class:`FileSink` (an
exactly-once sink by two-phase commit)."""
from __future__ import annotations

import glob
import json
import os
import uuid
from pathlib import Path
from typing import Any

from compat.storm_api.spout import Spout
from compat.storm_api.state import (
    HashMapState,
    State,
    StatefulComponent,
    TwoPhaseCommitBolt,
    prepared_transactions,
)
from compat.storm_api.tuple import Tuple

from .config import ConnectorConfigError, setting, task_slice

__all__ = ["FileSpout", "FileSink", "committed_files", "read_committed"]

_GLOB_CHARS = set("*?[")


class FileSpout(StatefulComponent, Spout):
    """Emits every line of one or more text files, once each, in order: field ``line``
    (without its ``\\n`` or ``\\r\\n``).

    Guarantee: under ``topology.reliability.mode: EFFECTIVELY_ONCE`` every line is
    reflected exactly once in the topology's state and in two-phase-commit sinks, whatever
    fails: the position (file path, byte offset after the last line emitted) lives in this
    task's state, written as lines are emitted, and a restored task seeks back to it and
    goes on from exactly the next line. In the other modes nothing is saved, so a restarted
    task reads its files again from the start, and tuples are emitted without ids (no acks,
    no replay of single tuples). Files are read once, in sorted path order, and must be
    complete when read: the spout does not follow a file that grows, and a file's last line
    needs no newline. A finite run ends: ``is_exhausted()`` is true after the last line of
    the last file.

    Config keys (``compat.connectors.config`` says where to set them):

    * ``heron.connectors.file.path`` (required): a path or a glob (``data/*.txt``,
      ``**`` recurses), or a list of them. A path that does not exist, or a glob matching
      no file, is an error naming this key. The set of files must stay the same across
      restores (a file sorting before the saved position is taken as read).
    * ``heron.connectors.file.batch.lines`` (default 100): most lines one ``next_tuple``
      emits (``next_tuple`` must return soon; checkpoints are taken between calls).
    * ``heron.connectors.file.encoding`` (default ``utf-8``): how lines are decoded; a
      line that does not decode fails the task, naming the file and byte offset.

    With more than one task, files are dealt out among the tasks (sorted files, round
    robin by task index), so each line is still read by exactly one task.
    """

    outputs = ["line"]

    #: where the position lives in the task's state: {"file": path, "offset": bytes}
    POSITION_KEY = "heron.connectors.file.position"

    state: State

    def init_state(self, stateful_state: State) -> None:
        """Keep the state; the seek happens in ``initialize``, once the files are known."""
        self.state = stateful_state

    def initialize(self, storm_conf: dict[str, Any], context: dict[str, Any]) -> None:
        if not hasattr(self, "state"):  # run without init_state (Storm's multi-lang): no saving
            self.state = HashMapState()
        patterns = setting(self, "heron.connectors.file.path", "strs")
        self._batch = setting(self, "heron.connectors.file.batch.lines", "int", 100, minimum=1)
        self._encoding = setting(self, "heron.connectors.file.encoding", "str", "utf-8")
        try:
            "".encode(self._encoding)
        except LookupError:
            raise ConnectorConfigError(
                f"{type(self).__name__}: config key 'heron.connectors.file.encoding' names "
                f"an unknown encoding {self._encoding!r}") from None
        files = _resolve(self, patterns)
        index, count = task_slice(self)
        self._files: list[str] = files[index::count]
        self._handle: Any = None
        self._index, self._offset = self._locate(self.state.get(self.POSITION_KEY))
        self._save_position()

    def _locate(self, position: Any) -> tuple[int, int]:
        """(file index, byte offset) to go on from, for a saved position."""
        if not position:
            return 0, 0
        path, offset = str(position["file"]), int(position["offset"])
        if path in self._files:
            index = self._files.index(path)
            if index == len(self._files) - 1 and offset >= os.path.getsize(path):
                return len(self._files), offset  # the end of the last file: exhausted
            return index, offset
        later = [i for i, f in enumerate(self._files) if f > path]
        return (later[0], 0) if later else (len(self._files), 0)

    def _save_position(self) -> None:
        if self._index < len(self._files):
            self.state[self.POSITION_KEY] = {"file": self._files[self._index],
                                             "offset": self._offset}
        elif self._files:
            self.state[self.POSITION_KEY] = {"file": self._files[-1],
                                             "offset": self._offset}

    def next_tuple(self) -> None:
        emitted = 0
        while emitted < self._batch and self._index < len(self._files):
            if self._handle is None:
                self._handle = open(self._files[self._index], "rb")  # noqa: SIM115
                self._handle.seek(self._offset)
            raw = self._handle.readline()
            if not raw:
                if self._index + 1 < len(self._files):
                    self._handle.close()
                    self._handle = None
                    self._index += 1
                    self._offset = 0
                    continue
                self._handle.close()  # the end of the last file: the offset stays at EOF
                self._handle = None
                self._index += 1
                break
            start = self._offset
            self._offset += len(raw)
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
            try:
                line = raw.decode(self._encoding)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{self._files[self._index]}: the line at byte {start} is "
                                 f"not {self._encoding}: {exc}") from exc
            self.emit([line])
            emitted += 1
        self._save_position()

    def pre_save(self, checkpoint_id: str) -> None:
        self._save_position()

    def is_exhausted(self) -> bool:
        return self._index >= len(self._files)

    def _close(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self._handle.close()
            self._handle = None


def _resolve(component: Any, patterns: list[str]) -> list[str]:
    """Sorted, absolute, distinct files for the configured paths and globs."""
    found: set[str] = set()
    for pattern in patterns:
        expanded = os.path.expanduser(pattern)
        if _GLOB_CHARS & set(expanded):
            matches = [m for m in glob.glob(expanded, recursive=True) if os.path.isfile(m)]
            if not matches:
                raise ConnectorConfigError(
                    f"{type(component).__name__}: config key 'heron.connectors.file.path': "
                    f"the glob {pattern!r} matches no file")
            found.update(os.path.abspath(m) for m in matches)
        elif os.path.isfile(expanded):
            found.add(os.path.abspath(expanded))
        else:
            raise ConnectorConfigError(
                f"{type(component).__name__}: config key 'heron.connectors.file.path': "
                f"{pattern!r} is not a file")
    return sorted(found)


# -- the sink -----------------------------------------------------------------------

_COMMITTED_SUFFIX = ".jsonl"
_TEMP_PREFIX = ".part-"
_TEMP_SUFFIX = ".inprogress"


def _safe(text: object) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text))


def committed_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The committed output files of FileSinks writing into ``directory``, sorted: what a
    reader of the output should read (transactions in progress are hidden dot files)."""
    root = Path(directory)
    if not root.is_dir():
        return []
    return sorted(p for p in root.glob(f"part-*{_COMMITTED_SUFFIX}")
                  if p.is_file() and not p.name.startswith("."))


def read_committed(directory: str | os.PathLike[str]) -> list[str]:
    """Every line of every committed file in ``directory``, file by file."""
    lines: list[str] = []
    for path in committed_files(directory):
        lines.extend(path.read_text(encoding="utf-8").splitlines())
    return lines


class FileSink(TwoPhaseCommitBolt):
    """Writes each input tuple as one line into files that appear only once committed.

    Guarantee: under ``EFFECTIVELY_ONCE`` every tuple the topology's consistent checkpoints
    account for is in the committed output exactly once, whatever fails. Each checkpoint
    interval is one transaction: lines go into a hidden temporary file
    (``.part-<task>-<random>.inprogress``); at the checkpoint ``pre_commit`` flushes and
    fsyncs it and its name goes into this bolt's state; when the checkpoint is consistent
    across the topology ``commit`` renames it to ``part-<task>-<checkpoint>.jsonl`` (an
    atomic rename, then the directory is fsynced). Commit is idempotent: a transaction whose
    visible file exists and whose temporary file is gone is committed already, so the
    re-commit a restore runs changes nothing. An aborted transaction's file is deleted, and
    temporary files a crashed process left are deleted once the first checkpoint after the
    task starts again is consistent (their tuples are replayed from the checkpoint; by then
    every task has committed what its restored state held, which after a parallelism
    change may be another task's transactions). Readers must read only ``part-*.jsonl``
    (:func:`committed_files`, :func:`read_committed`); a transaction with no tuples writes
    no file. In the other reliability modes nothing is ever committed: use it with
    ``EFFECTIVELY_ONCE``. One case escapes: a restore that falls back past a checkpoint
    that was already committed (its checkpoint data was lost) replays that checkpoint's
    tuples into a new file. A prepared transaction whose files are in the directory no
    more (a ``--from-savepoint`` start with another ``heron.connectors.file.sink.dir``, or
    output moved away) fails the task with a message naming the checkpoint, the files and
    both directories, rather than dropping its records.

    Config keys:

    * ``heron.connectors.file.sink.dir`` (required): the output directory (created if
      missing). Task ids are unique in a topology, so tasks never write the same name; two
      topologies need two directories. Keep it when starting from a savepoint: the
      savepoint's prepared transactions are committed from it.

    Line format: ``format_tuple(tup)``, by default the JSON of the tuple's values
    (``["word", 3]``); a subclass overrides it to write another format (one line, no
    newline in it).
    """

    def format_tuple(self, tup: Tuple) -> str:
        """The line for ``tup`` (without a newline); override for another format."""
        return json.dumps(list(tup.values), ensure_ascii=False, separators=(",", ":"))

    # -- setup: init_state (which commits and begins) comes before initialize ---------
    def _setup(self) -> None:
        if getattr(self, "_dir", None) is not None:
            return
        directory = Path(setting(self, "heron.connectors.file.sink.dir", "str"))
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConnectorConfigError(
                f"{type(self).__name__}: config key 'heron.connectors.file.sink.dir': cannot "
                f"create {str(directory)!r}: {exc}") from exc
        self._dir = directory
        self._task = _safe(self.task_id if self.task_id is not None else 0)
        self._txn: Any = None
        self._txn_name: str | None = None
        self._txn_records = 0
        self._cleaned = False

    def _remove_orphans(self) -> None:
        """Delete temporary files an earlier process of this task left: transactions
        that never became part of the output. Only once the first checkpoint after this
        task started is consistent: by then every task of the sink has committed the
        transactions its restored state held, whichever task prepared them (after a
        parallelism change one task commits them all). A file with this task's prefix is
        an orphan unless it is the open transaction or a prepared one this task's state
        still holds (its own, of a checkpoint after the one just committed, or one it
        inherited): those are committed later, and deleting them would lose their
        records."""
        keep = {self._txn_name}
        for _checkpoint_id, prepared in prepared_transactions(getattr(self, "state", {})):
            if isinstance(prepared, dict) and prepared.get("temp"):
                keep.add(str(prepared["temp"]))
        for path in self._dir.glob(f"{_TEMP_PREFIX}{self._task}-*{_TEMP_SUFFIX}"):
            if path.name in keep:
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                pass

    def post_save(self, checkpoint_id: str) -> None:
        super().post_save(checkpoint_id)
        if not self._cleaned:
            self._remove_orphans()
            self._cleaned = True

    def begin(self) -> None:
        self._setup()
        self._txn = None
        self._txn_name = None
        self._txn_records = 0

    def process(self, tup: Tuple) -> None:
        line = self.format_tuple(tup)
        if "\n" in line or "\r" in line:
            raise ValueError(f"{type(self).__name__}.format_tuple gave a line with a newline "
                             f"in it: {line!r}")
        if self._txn is None:
            self._txn_name = f"{_TEMP_PREFIX}{self._task}-{uuid.uuid4().hex}{_TEMP_SUFFIX}"
            self._txn = open(self._dir / self._txn_name, "x", encoding="utf-8",  # noqa: SIM115
                             newline="\n")
        self._txn.write(line + "\n")
        self._txn_records += 1

    def pre_commit(self, checkpoint_id: str) -> Any:
        """Make the open file durable; returns {"temp", "final", "records", "dir"} (names
        in the output directory, and that directory, kept to say where a lost transaction
        was prepared), or None for a transaction with no tuples."""
        if self._txn is None:
            return None
        self._txn.flush()
        os.fsync(self._txn.fileno())
        self._txn.close()
        self._txn = None
        return {"temp": self._txn_name,
                "final": f"part-{self._task}-{_safe(checkpoint_id)}{_COMMITTED_SUFFIX}",
                "records": self._txn_records, "dir": str(self._dir)}

    def commit(self, checkpoint_id: str, prepared: Any) -> None:
        """Rename the prepared file to its visible name; nothing to do when it is there.
        Raises when neither is in the directory: the transaction's records belong to a
        consistent checkpoint and are not replayed, so going on would lose them."""
        if not prepared:
            return
        self._setup()
        temp = self._dir / prepared["temp"]
        final = self._dir / prepared["final"]
        try:
            os.replace(temp, final)
        except FileNotFoundError:
            if final.exists():
                return  # committed already
            raise RuntimeError(self._lost_message(checkpoint_id, prepared, temp, final)) \
                from None
        _fsync_dir(self._dir)

    def _lost_message(self, checkpoint_id: str, prepared: Any, temp: Path, final: Path) -> str:
        records = prepared.get("records")
        count = ("an unknown number of records" if records is None else
                 f"{records} record{'' if records == 1 else 's'}")
        where = prepared.get("dir")
        if where is None:  # prepared before sinks recorded their directory
            cause = ("The state was probably restored from a savepoint (heron submit "
                     "--from-savepoint) taken while the sink wrote to another directory, or "
                     "the sink's files were moved or deleted.")
        elif Path(where) == self._dir:
            cause = ("It was prepared in this directory: its files were probably moved or "
                     "deleted since, or this path is another directory than the one it was "
                     "prepared in (a directory local to another node).")
        else:
            still = (", where its temporary file still is"
                     if (Path(where) / str(prepared["temp"])).exists() else "")
            cause = (f"It was prepared in {where!r}{still}: the state was probably restored "
                     f"from a savepoint (heron submit --from-savepoint) taken while the sink "
                     f"wrote to that directory, or the sink's files were moved.")
        return (
            f"{type(self).__name__}: the prepared transaction of checkpoint {checkpoint_id} "
            f"({count}) is lost: neither its temporary file {temp.name!r} nor its committed "
            f"file {final.name!r} is in {str(self._dir)!r} (config key "
            f"'heron.connectors.file.sink.dir'). {cause} Its records belong to the restored "
            f"checkpoint and are not replayed, so the task stops rather than drop them: set "
            f"heron.connectors.file.sink.dir to the directory the transaction was prepared "
            f"in, or move that directory's files (the hidden {_TEMP_PREFIX}*{_TEMP_SUFFIX} "
            f"ones too) into {str(self._dir)!r}, and start the topology again.")

    def abort(self) -> None:
        if getattr(self, "_txn", None) is None:
            return
        self._txn.close()
        self._txn = None
        name = self._txn_name
        assert name is not None  # named when _txn was opened
        try:
            (self._dir / name).unlink()
        except FileNotFoundError:
            pass
        self._txn_name = None

    def _close(self) -> None:
        if getattr(self, "_txn", None) is not None:
            self._txn.close()  # left for the restore's clean-up, as a crash would


def _fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
