"""``StreamletSpoutBase``: the streamlet ``output`` stream for sources (see streamletboltbase)."""

from __future__ import annotations

from heronpy.streamlet.impl.streamletboltbase import StreamletBoltBase


class StreamletSpoutBase(StreamletBoltBase):
    """Declares and emits the ``output`` stream of a streamlet source."""
