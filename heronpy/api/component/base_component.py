"""``BaseComponent``: what heronpy's spouts and bolts share (the delegate, ``log``).

Mixed in before ``compat.storm_api``'s Spout/Bolt, so a heronpy component is a Storm-API
component our engines host. Its constructor takes heronpy's ``delegate`` (Heron's
instance builds components as ``cls(delegate=...)``) as well as the keyword arguments our
hosting passes; when an engine binds the component, ``runtime.bind`` supplies the
delegate if none was given.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from heronpy.api.component import runtime


class BaseComponent:
    """Base component for Heron spout and bolt."""

    def __init__(self, delegate: Any = None, **kwargs: Any) -> None:
        # never the process's stdin/stdout or a signal handler: the engine hosts us
        kwargs.setdefault("input_stream", io.BytesIO())
        kwargs.setdefault("output_stream", io.BytesIO())
        kwargs.setdefault("rdb_signal", None)
        super().__init__(**kwargs)  # compat.storm_api's Component
        self.delegate = delegate
        self.logger = getattr(delegate, "logger", None) or logging.getLogger(type(self).__name__)

    def _bind(self, storm_conf: dict[str, Any], context: dict[str, Any], collector: Any,
              logger: logging.Logger) -> None:
        # a mixin: the compat Spout or Bolt after it in the bases defines _bind
        super()._bind(storm_conf, context, collector, logger)  # type: ignore[misc]
        runtime.bind(self, storm_conf, logger)

    def log(self, message: Any, level: str | None = None) -> None:
        """Log ``message`` at ``level`` (trace, debug, info, warn or error; default info)."""
        self.delegate.log(message, level)
