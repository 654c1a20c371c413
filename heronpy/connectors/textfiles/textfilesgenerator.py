"""``TextFileGenerator``: a Generator emitting the lines of the files a glob matches.

The files are split over the source's partitions (partition ``i`` of ``n`` reads files
``i, i+n, ...`` of the sorted match list); each line is emitted once, with its newline,
and the source is exhausted when every file is read (``get()`` returns None).
"""

from __future__ import annotations

import glob
import logging
from typing import Any

from heronpy.streamlet.generator import Generator


class TextFileGenerator(Generator):
    """Reads the files matching ``filepattern`` (matched when the topology is built)."""

    def __init__(self, filepattern: str) -> None:
        super().__init__()
        self._files = sorted(glob.glob(filepattern))

    def setup(self, context: Any) -> None:
        index = context.get_partition_index()
        self._files_to_consume = self._files[index::context.get_num_partitions()]
        self._logger().info("TextFileGenerator files to consume %s", self._files_to_consume)
        self._lines: list[str] = []
        self._emit_count = 0

    def _logger(self) -> Any:
        return getattr(self, "logger", None) or logging.getLogger(type(self).__name__)

    def get(self) -> Any:
        while not self._lines:
            if not self._files_to_consume:
                return None
            path = self._files_to_consume.pop(0)
            self._logger().info("Now reading file %s", path)
            with open(path, encoding="utf8") as handle:
                self._lines = handle.readlines()
        self._emit_count += 1
        return self._lines.pop(0)
