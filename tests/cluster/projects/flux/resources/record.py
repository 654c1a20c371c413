"""The recording sink as a multilang bolt (pystorm): appends ``id word`` for every tuple
to ``records-<task>.log`` in the store (``e2e.store``); auto-ack acks it."""

import os
from pathlib import Path

from pystorm import Bolt


class RecordingBolt(Bolt):
    def initialize(self, storm_conf, context):
        self.path = Path(storm_conf["e2e.store"]) / f"records-{self.task_id}.log"

    def process(self, tup):
        i, word = tup.values
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{i} {word}\n".encode())
            os.fsync(fd)
        finally:
            os.close(fd)


if __name__ == "__main__":
    RecordingBolt().run()
