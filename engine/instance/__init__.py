"""The Heron Instance: one OS process per task.

A gateway thread owns the sockets (the Stream Manager, the Metrics Manager) and an
executor thread runs the user's spout or bolt; they talk over two bounded in-process
pipes, so a slow bolt stops the gateway reading, which fills the Stream Manager's
socket, which is backpressure the Stream Manager can see. Emits are validated and
serialized once here, packed into columnar batches with their fields-grouping hashes,
and never decoded again until the consuming instance.
"""
