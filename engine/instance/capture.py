"""What an instance's leaf streams (or, for conformance, all its streams) produced, kept
where ``heron run`` can read it.

Leaf streams (nobody consumes them) are the topology's results. Each instance keeps the
same summary the ``storm`` engine keeps (counts, samples, latest value per key) and
writes it to ``capture/<component>_<task>.summary`` when it stops or finishes; with
``capture_all`` every leaf tuple is also appended, still serialized, to
``capture/<component>_<task>.tuples`` for a full diff. The CLI merges the files.

For the conformance suite, each instance also writes every captured tuple, as a consumer
sees it, straight to a JSON-lines capture file of its own (the capture line format of
:mod:`engine.common.runtime.capture_format`, message ids included) in the directory the run names in
``capture/`` :data:`JSONL_CONFIG` (:func:`write_jsonl_config`, written by
``HeronLocalRun`` before any instance starts). Nothing merges those files: the differ
reads the directory. The ``.tuples`` files stay what ``heron run --capture`` and tests
read back through :func:`read_captures`.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import msgpack

from engine.common.runtime.capture import OutputCapture
from engine.common.runtime.capture_format import capture_line, open_task_file

SUMMARY_SUFFIX = ".summary"
_SCALARS = (str, int, float)
_NUMBERS = (int, float)
TUPLES_SUFFIX = ".tuples"
#: the file in an instance's capture directory asking it for a JSON-lines capture
JSONL_CONFIG = "jsonl-capture.json"
#: bytes of JSON lines an instance buffers; flushed with each summary, at the end, and
#: at a tuple when the last flush is this many seconds old
_JSONL_BUFFER = 1 << 16
_JSONL_FLUSH_SECS = 0.5


@dataclass(frozen=True)
class JsonlCapture:
    """Where every instance writes its JSON-lines capture file, and the provenance its
    lines carry (``engine.common.runtime.capture_format.CAPTURE_FIELDS``)."""

    directory: str
    engine: str
    case: str
    run_id: str


def write_jsonl_config(capture_dir: Path, config: JsonlCapture) -> Path:
    """Ask the instances of a run (started after this) for JSON-lines capture files.
    Written atomically; the capture directory is the run's own (owner-only)."""
    capture_dir = Path(capture_dir)
    capture_dir.mkdir(parents=True, exist_ok=True)
    target = capture_dir / JSONL_CONFIG
    tmp = target.with_name(f".{target.name}.{os.getpid()}")
    tmp.write_text(json.dumps(asdict(config)), encoding="utf-8")
    os.replace(tmp, target)
    return target


def read_jsonl_config(capture_dir: Path) -> JsonlCapture | None:
    """The run's :class:`JsonlCapture`, or None when it asked for none (a bad file is
    an error naming it: the instance then fails to start, and says why in its log)."""
    path = Path(capture_dir) / JSONL_CONFIG
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return JsonlCapture(**json.loads(text))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a JSON-lines capture request: {exc}") from None


class _JsonlFile:
    """One instance process's JSON-lines capture file (the capture line format)."""

    def __init__(self, config: JsonlCapture, component: str, task: int, loads: Any) -> None:
        self._line = capture_line
        self._loads = loads
        self.config = config
        self.component = component
        self.task = task
        self.path, fh = open_task_file(Path(config.directory), component, task,
                                       buffering=_JSONL_BUFFER)
        self._fh: IO[str] | None = fh
        self._flushed = time.monotonic()

    def write(self, stream: str, payload: bytes, message_id: Any) -> None:
        if self._fh is None:
            return
        c = self.config
        self._fh.write(self._line(c.engine, c.case, c.run_id, self.component, stream,
                                  self.task, self._loads(payload), message_id) + "\n")
        now = time.monotonic()
        if now - self._flushed >= _JSONL_FLUSH_SECS:  # a kill from outside loses little
            self._flushed = now
            self._fh.flush()

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class InstanceCapture:
    def __init__(self, directory: Path, component: str, task: int,
                 fields: dict[str, tuple[str, ...]], loads: Any, capture_all: bool) -> None:
        self.directory = Path(directory)
        self.component = component
        self.task = task
        self._loads = loads
        self.summary = OutputCapture()
        self._streams = {name: self.summary.declare(component, name, f)
                         for name, f in fields.items()}
        self._tuples = None
        self._max_keys = self.summary._max_keys
        self._max_samples = self.summary._max_samples
        #: streams whose samples are taken: their ``(key, number)`` rows need no decoding
        self._sampled: dict[str, Any] = {}
        self._pack = msgpack.Packer(use_bin_type=True, autoreset=True).pack
        #: this process's JSON-lines capture file, when the run asked for them
        self._jsonl: _JsonlFile | None = None
        config = read_jsonl_config(self.directory)
        if config is not None:
            self._jsonl = _JsonlFile(config, component, task, loads)
        if capture_all:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._tuples = open(self.directory / f"{component}_{task}{TUPLES_SUFFIX}", "ab",
                                buffering=1 << 20)

    def record(self, stream: str, values: Any, payload: bytes,
               message_id: Any = None) -> None:
        """Count a leaf tuple. The summary needs the values as a consumer would see them
        (after the serializer's round trip); scalars survive it unchanged, so the
        common ``(key, number)`` row skips decoding. ``message_id`` is a spout's message
        id for the tuple (it goes to the JSON-lines capture)."""
        if self._tuples is not None:
            self._tuples.write(self._pack((stream, payload)))
        if self._jsonl is not None:
            self._jsonl.write(stream, payload, message_id)
        cap = self._sampled.get(stream)
        if cap is not None and len(values) == 2:
            key, value = values
            if type(key) in _SCALARS and type(value) in _NUMBERS:
                cap.count += 1
                latest = cap.latest
                key = (key,)
                if len(latest) < self._max_keys or key in latest:
                    latest[key] = value
                else:
                    cap.keys_dropped += 1
                return
        cap = self._streams[stream]
        self.summary.record(cap, self.task, self._loads(payload))
        if len(cap.samples) >= self._max_samples:
            self._sampled[stream] = cap

    def write_summary(self) -> None:
        """Atomically replace this task's summary file (a reader never sees half of one)."""
        if self._tuples is not None:
            self._tuples.flush()
        if self._jsonl is not None:
            self._jsonl.flush()
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / f"{self.component}_{self.task}{SUMMARY_SUFFIX}"
        tmp = target.with_name(f".{target.name}.{os.getpid()}")
        with open(tmp, "wb") as fh:
            pickle.dump({"component": self.component, "task": self.task,
                         "streams": dict(self.summary.streams)}, fh)
        os.replace(tmp, target)

    def close(self) -> None:
        self.write_summary()
        if self._tuples is not None:
            self._tuples.close()
            self._tuples = None
        if self._jsonl is not None:
            self._jsonl.close()
            self._jsonl = None


def read_captures(directory: Path, loads: Any, keep_all: bool = False,
                  jsonl: Path | None = None, sink: Any = None) -> OutputCapture:
    """Merge every instance's capture files into one OutputCapture (summaries are summed
    per stream; latest values per key merge, since a key lives in one task under
    fields grouping). ``sink`` (a ``CaptureSink``) gets every tuple with its task."""
    merged = OutputCapture(jsonl=jsonl, keep_all=keep_all, sink=sink)
    directory = Path(directory)
    for path in sorted(directory.glob(f"*{SUMMARY_SUFFIX}")):
        with open(path, "rb") as fh:
            data = pickle.load(fh)
        for (component, stream), cap in data["streams"].items():
            target = merged.streams.get((component, stream))
            if target is None:
                target = merged.declare(component, stream, cap.fields)
            target.count += cap.count
            room = 5 - len(target.samples)
            if room > 0:
                target.samples.extend(cap.samples[:room])
            target.latest.update(cap.latest)
            target.keys_dropped += cap.keys_dropped
    if keep_all or jsonl is not None or sink is not None:
        for path in sorted(directory.glob(f"*{TUPLES_SUFFIX}")):
            component, _, task = path.name[:-len(TUPLES_SUFFIX)].rpartition("_")
            with open(path, "rb") as fh:
                for stream, payload in msgpack.Unpacker(fh, raw=False):
                    cap = merged.streams.get((component, stream))
                    if cap is None:
                        continue
                    values = loads(payload)
                    if cap.tuples is not None:
                        cap.tuples.append(values)
                    if merged._jsonl is not None:
                        merged._jsonl.write(json.dumps({"component": component, "stream": stream,
                                                        "task": int(task), "values": values},
                                                       default=repr) + "\n")
                    if merged.sink is not None:
                        merged.sink.write(component, stream, int(task), values)
    merged.close()
    return merged
