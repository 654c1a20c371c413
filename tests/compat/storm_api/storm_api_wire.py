"""Helpers to drive components over in-memory multi-lang streams.

Used by the differential tests: the same input goes to a pystorm class and
to our class, and their protocol output is compared message by message.
"""
from __future__ import annotations

import io
import logging
import sys
from typing import Any

import msgpack
import simplejson as json

SERIALIZER_NAMES = ["json", "msgpack"]

BOLT_CONTEXT = {
    "taskid": 3,
    "componentid": "split-bolt",
    "task->component": {"-1": "__system", "1": "sentence-spout", "2": "2nd", "3": "split-bolt"},
    "streams": ["default", "other"],
    "stream->outputfields": {"default": ["word"], "other": ["a", "b"]},
    "stream->target->grouping": {},
    "source->stream->grouping": {"sentence-spout": {"default": {"type": "SHUFFLE"}}},
    "source->stream->fields": {"sentence-spout": {"default": ["sentence"], "pairs": ["a", "b"]},
                               "2nd": {"default": ["x"]}},
}
SPOUT_CONTEXT = {
    "taskid": 1,
    "componentid": "sentence-spout",
    "task->component": {"-1": "__system", "1": "sentence-spout", "3": "split-bolt"},
    "streams": ["default"],
    "stream->outputfields": {"default": ["sentence"]},
}


def handshake(pid_dir: Any, conf: dict | None = None, context: dict | None = None) -> dict:
    return {"pidDir": str(pid_dir), "conf": {"topology.name": "wire-test", **(conf or {})},
            "context": BOLT_CONTEXT if context is None else context}


def tup(
    id: str,
    values: list,
    comp: str | None = "sentence-spout",
    stream: str = "default",
    task: int = 1,
) -> dict:
    return {"id": id, "comp": comp, "stream": stream, "task": task, "tuple": values}


def tick(id: str, freq: int = 1) -> dict:
    return tup(id, [freq], comp="__system", stream="__tick", task=-1)


def heartbeat(id: str) -> dict:
    return tup(id, [], comp=None, stream="__heartbeat", task=-1)


def command(name: str, id: Any = None) -> dict:
    return {"command": name} if id is None else {"command": name, "id": id}


def encode(messages: list, serializer: str) -> bytes:
    if serializer == "json":
        return "".join(json.dumps(m) + "\nend\n" for m in messages).encode("utf-8")
    return b"".join(msgpack.packb(m) for m in messages)


def decode(data: bytes, serializer: str) -> list:
    if serializer == "json":
        chunks = data.decode("utf-8").split("\nend\n")
        assert chunks[-1] == "", f"unterminated message: {chunks[-1]!r}"
        return [json.loads(chunk) for chunk in chunks[:-1]]
    unpacker = msgpack.Unpacker()
    unpacker.feed(data)
    return list(unpacker)


def _raise_exit(code: int) -> None:
    # The real _exit uses os._exit when other threads are alive, which would
    # end the test process; _exit itself is tested on its own.
    raise SystemExit(code)


def run_wire(cls: type, messages: list, serializer: str = "json") -> tuple[list, int]:
    """Run ``cls`` on ``messages``; return its output messages and exit code.

    Logging and ``sys.stdout`` are restored afterwards because ``run()``
    configures them for a whole process.
    """
    root = logging.getLogger()
    saved_handlers = list(root.handlers)
    watched = [logging.getLogger(name) for name in ("pystorm", "compat.storm_api")]
    saved_levels = [logger.level for logger in watched]
    saved_stdout = sys.stdout
    out = io.BytesIO()
    component = cls(
        input_stream=io.BytesIO(encode(messages, serializer)),
        output_stream=out,
        rdb_signal=None,
        serializer=serializer,
    )
    component._exit = _raise_exit
    code = None
    try:
        component.run()
    except SystemExit as exc:
        code = exc.code
    finally:
        for handler in root.handlers[:]:
            if handler not in saved_handlers:
                root.removeHandler(handler)
                handler.close()
        for logger, level in zip(watched, saved_levels):
            logger.setLevel(level)
        sys.stdout = saved_stdout
    return decode(out.getvalue(), serializer), code


def normalize(messages: list) -> list:
    """Blank out what legitimately differs: pid, log text, traceback frames.

    Error messages keep their first line ("Python X raised while processing
    Tuple ...") and their last line (the exception itself).
    """
    normalized = []
    for message in messages:
        message = dict(message) if isinstance(message, dict) else message
        if isinstance(message, dict) and "pid" in message:
            message["pid"] = "PID"
        elif isinstance(message, dict) and message.get("command") == "log":
            message["msg"] = "..."
        elif isinstance(message, dict) and message.get("command") == "error":
            lines = [line for line in message["msg"].splitlines() if line.strip()]
            message["msg"] = [lines[0], lines[-1]]
        normalized.append(message)
    return normalized


def variants(body: type, base_name: str) -> tuple[type, type]:
    """The same component body on pystorm's base class and on ours."""
    import pystorm

    from compat.storm_api import bolt, spout

    ours = getattr(bolt, base_name, None) or getattr(spout, base_name)
    theirs = getattr(pystorm, base_name)
    name = body.__name__.replace("Body", "")
    return type(name, (body, theirs), {}), type(name, (body, ours), {})
