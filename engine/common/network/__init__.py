"""Transport between engine processes: pyzmq sockets carrying ``[type, protobuf]`` frames.

One thread owns each socket. Data sockets have small high-water marks and fixed kernel
buffers (``inflight``: the bytes a hop may hold) and send without blocking, so a slow
peer shows up as a full socket (measurable backpressure) rather than as bytes hidden in
zmq's queues. Linger is bounded so no process hangs on
exit, and streams end with an acknowledged end-of-stream message, never by closing a
socket (zmq may drop the last messages of a socket closed right after sending).
"""

from engine.common.network.codec import MalformedMessage, decode, encode, type_frame
from engine.common.network.endpoints import ipc_dir, ipc_endpoint
from engine.common.network.inflight import DATA_HWM, SOCKET_BUFFER_BYTES
from engine.common.network.sockets import (
                                    bind_router,
                                    connect_dealer,
                                    new_context,
                                    request,
)

__all__ = ["DATA_HWM", "SOCKET_BUFFER_BYTES", "MalformedMessage", "bind_router",
           "connect_dealer", "decode", "encode", "ipc_dir", "ipc_endpoint", "new_context",
           "request", "type_frame"]
