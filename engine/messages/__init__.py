"""Protobuf messages exchanged between the engine's processes.

Every module here except this one is generated from proto/heron/proto/*.proto by
``python scripts/gen_proto.py``; edit the schemas, never the ``*_pb2`` files.
Module names follow the schema files (``topology_pb2``, ``tuple_pb2``,
``stmgr_pb2``, ...), and message names follow Heron's where Heron has the message.
"""
