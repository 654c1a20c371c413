"""Components of the chaos soak (bench/chaos.py): an at-least-once word count whose
spout is replayable the way a Kafka consumer is, and whose sink de-duplicates by id.

Corpus. A fixed, deterministic corpus of sentences: partition ``p`` (one per spout task)
holds offsets 0, 1, 2, ...; the sentence at ``(p, offset)`` is 3-8 words of a 512-word
vocabulary, chosen from a BLAKE2b digest of ``seed:p:offset`` (nothing random, nothing
downloaded: the bench recomputes any sentence to check what the sink recorded). A
sentence's id is ``offset * partitions + p``.

Spout (``SentenceSpout``). Its position is durable, as a Kafka consumer's committed
offset is: ``<chaos.dir>/spout-<p>.json`` holds the highest contiguous acked offset
(``offset``: every offset below it is acked) and a write-ahead high-water mark of what
it may have emitted (``emitted``: raised, and the file rewritten, before any offset at or
above it is emitted). The file is written to a temporary name, fsynced and renamed over
the old one. A spout process that starts (the first time, or after ``kill -9``) resumes
at ``offset`` and emits everything from there again; failed and timed-out ids are
re-emitted first. It offers ``chaos.rate`` ids/s in all (shared by its tasks). When the
file ``<chaos.dir>/stop`` exists it emits nothing beyond ``emitted``, so that once every
tree is acked, ``offset == emitted`` and the corpus prefix ``[0, emitted)`` of every
partition has been delivered.

Split (``SplitSentence``): counts the sentence's words and emits ``(id, words)``,
anchored (auto-anchor, auto-ack).

Sink (``DedupSink``, fields-grouped on the id, so an id always reaches the same sink
task): records each id the first time it arrives, ``<id> <words>\\n``, and each later
delivery as ``d <id>\\n``, appended with ``os.write`` to ``<chaos.dir>/sink-<task>.log``
(``O_APPEND``; what a process wrote survives its ``kill -9``; fsynced once a second)
before the tuple is acked. A restarted sink reads its file back into a bitmap of seen ids
(one bit per id), so de-duplication survives restarts and memory stays flat.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import deque

from compat.storm_api import Bolt, Spout

#: the corpus's vocabulary: 512 words made of syllables (deterministic)
_SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "va", "gu", "shi",
              "ro", "be", "an", "el", "or", "um", "ix", "ye", "zo", "fa", "qu", "th"]


def _vocabulary(size: int = 512) -> list[str]:
    words, i = [], 0
    while len(words) < size:
        digest = hashlib.blake2b(f"vocab:{i}".encode(), digest_size=4).digest()
        word = "".join(_SYLLABLES[b % len(_SYLLABLES)] for b in digest[:2 + digest[3] % 2])
        if word not in words:
            words.append(word)
        i += 1
    return words


VOCABULARY = _vocabulary()


def sentence(seed: int, partition: int, offset: int) -> str:
    """The corpus's sentence at ``(partition, offset)``: 3-8 words."""
    d = hashlib.blake2b(f"{seed}:{partition}:{offset}".encode(), digest_size=20).digest()
    n = 3 + d[0] % 6
    return " ".join(VOCABULARY[int.from_bytes(d[1 + 2 * i:3 + 2 * i], "big") % len(VOCABULARY)]
                    for i in range(n))


def sentence_id(partition: int, offset: int, partitions: int) -> int:
    return offset * partitions + partition


def split_id(gid: int, partitions: int) -> tuple[int, int]:
    """``(partition, offset)`` of an id."""
    return gid % partitions, gid // partitions


def write_json_atomic(path: str, value: dict) -> None:
    """Write, fsync, rename: a reader (or a restarted process) sees the old or the new
    content, never a torn one."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as fh:
        fh.write(json.dumps(value))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_json(path: str) -> dict:
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def _peers(ctx) -> tuple[int, int]:
    """(this task's index among its component's tasks, how many there are)."""
    task = int(ctx["taskid"])
    component = ctx["task->component"][str(task)]
    peers = sorted(int(t) for t, c in ctx["task->component"].items() if c == component)
    return peers.index(task), len(peers)


class SentenceSpout(Spout):
    outputs = ["id", "sentence"]

    #: ids written ahead into the high-water mark at a time
    AHEAD = 256
    #: seconds between commits of the acked position
    COMMIT_EVERY = 0.25

    def initialize(self, conf, ctx):
        self.partition, self.partitions = _peers(ctx)
        self.dir = conf["chaos.dir"]
        os.makedirs(self.dir, exist_ok=True)
        self.seed = int(conf.get("chaos.seed", 7))
        self.rate = float(conf.get("chaos.rate", 1000)) / self.partitions
        self.path = os.path.join(self.dir, f"spout-{self.partition}.json")
        self.stop_path = os.path.join(self.dir, "stop")
        state = read_json(self.path)
        self.committed = int(state.get("offset", 0))
        self.high = int(state.get("emitted", self.committed))
        self.counters = {k: int(state.get(k, 0)) for k in
                         ("emits", "replays", "acks", "fails")}
        self.counters["starts"] = int(state.get("starts", 0)) + 1
        #: offsets at or above this, below the high-water mark at start, are replays
        self.replay_below = self.high
        self.next = self.committed
        self.acked: set[int] = set()
        self.retry: deque[int] = deque()
        self.limit: int | None = None
        self.next_at = 0.0
        self.next_check = 0.0
        self.next_commit = 0.0
        self.dirty = True
        self._commit()

    # -- durable position ----------------------------------------------------------------
    def _commit(self) -> None:
        write_json_atomic(self.path, {"offset": self.committed, "emitted": self.high,
                                      "time": time.time(), **self.counters})
        self.dirty = False

    def _housekeeping(self, now: float) -> None:
        if now >= self.next_check:
            self.next_check = now + 0.5
            if self.limit is None and os.path.exists(self.stop_path):
                self.limit = self.high
                self.dirty = True
        if self.dirty and now >= self.next_commit:
            self.next_commit = now + self.COMMIT_EVERY
            self._commit()

    # -- emitting ------------------------------------------------------------------------
    def _emit(self, offset: int) -> None:
        if offset >= self.high:  # write ahead: never emit past the durable mark
            self.high = offset + self.AHEAD
            self._commit()
        gid = sentence_id(self.partition, offset, self.partitions)
        self.emit([gid, sentence(self.seed, self.partition, offset)], tup_id=offset)
        self.counters["emits"] += 1
        if offset < self.replay_below:
            self.counters["replays"] += 1

    def next_tuple(self):
        now = time.monotonic()
        self._housekeeping(now)
        # failed ids and the replay after a restart go first and unpaced (the engine's
        # topology.max.spout.pending bounds them), so a recovered spout catches up
        for _ in range(50):
            if self.retry:
                offset = self.retry.popleft()
                if offset >= self.committed and offset not in self.acked:
                    self._emit(offset)
                continue
            self.next = max(self.next, self.committed)
            if self.next >= self.replay_below or (
                    self.limit is not None and self.next >= self.limit):
                break
            self._emit(self.next)
            self.next += 1
        if now < self.next_at:
            return
        # new ids at the offered rate, 10 at a time (a late call catches up 0.1 s at most)
        burst = 10
        self.next_at = max(self.next_at, now - 0.1) + burst / self.rate
        for _ in range(burst):
            self.next = max(self.next, self.committed)
            if self.limit is not None and self.next >= self.limit:
                return
            self._emit(self.next)
            self.next += 1

    def ack(self, tup_id):
        offset = int(tup_id)
        self.counters["acks"] += 1
        if offset < self.committed:
            return
        self.acked.add(offset)
        while self.committed in self.acked:
            self.acked.discard(self.committed)
            self.committed += 1
        self.dirty = True

    def fail(self, tup_id):
        offset = int(tup_id)
        self.counters["fails"] += 1
        self.dirty = True
        if offset >= self.committed and offset not in self.acked:
            self.retry.append(offset)

    def close(self):
        self._commit()


class SplitSentence(Bolt):
    outputs = ["id", "words"]

    def process(self, tup):
        gid, text = tup.values
        self.emit([gid, len(text.split())])


class DedupSink(Bolt):
    outputs = []

    SYNC_EVERY = 1.0

    def initialize(self, conf, ctx):
        directory = conf["chaos.dir"]
        os.makedirs(directory, exist_ok=True)
        self.path = os.path.join(directory, f"sink-{ctx['taskid']}.log")
        self.seen = bytearray(1 << 16)
        self.duplicates = 0
        try:
            with open(self.path, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b""
        lines = data.split(b"\n")
        if lines and lines[-1]:  # a line cut by a kill: finish it so appends stay whole
            data += b"\n"
        for line in lines:
            parts = line.split()
            if len(parts) == 2 and parts[0] != b"d":
                self._mark(int(parts[0]))
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if lines and lines[-1]:
            os.write(self.fd, b"\n")
        self.next_sync = time.monotonic() + self.SYNC_EVERY

    def _mark(self, gid: int) -> bool:
        """Set the id's bit; whether it was set already."""
        byte, bit = gid >> 3, 1 << (gid & 7)
        if byte >= len(self.seen):
            self.seen.extend(bytearray(max(byte + 1 - len(self.seen), len(self.seen))))
        was = bool(self.seen[byte] & bit)
        self.seen[byte] |= bit
        return was

    def process(self, tup):
        gid, words = tup.values
        if self._mark(int(gid)):
            os.write(self.fd, b"d %d\n" % gid)
        else:
            os.write(self.fd, b"%d %d\n" % (gid, words))
        now = time.monotonic()
        if now >= self.next_sync:
            self.next_sync = now + self.SYNC_EVERY
            os.fsync(self.fd)

    def cleanup(self):
        try:
            os.fsync(self.fd)
            os.close(self.fd)
        except OSError:
            pass
