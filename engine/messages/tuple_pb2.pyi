from . import topology_pb2 as _topology_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ControlKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACK: _ClassVar[ControlKind]
    FAIL: _ClassVar[ControlKind]
    EMIT: _ClassVar[ControlKind]
ACK: ControlKind
FAIL: ControlKind
EMIT: ControlKind

class TupleBatch(_message.Message):
    __slots__ = ("stream", "src_task_id", "values", "key_hash_width", "key_hashes", "dest_counts", "dest_tasks", "root_counts", "root_tasks", "root_keys", "edge_keys")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    SRC_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    KEY_HASH_WIDTH_FIELD_NUMBER: _ClassVar[int]
    KEY_HASHES_FIELD_NUMBER: _ClassVar[int]
    DEST_COUNTS_FIELD_NUMBER: _ClassVar[int]
    DEST_TASKS_FIELD_NUMBER: _ClassVar[int]
    ROOT_COUNTS_FIELD_NUMBER: _ClassVar[int]
    ROOT_TASKS_FIELD_NUMBER: _ClassVar[int]
    ROOT_KEYS_FIELD_NUMBER: _ClassVar[int]
    EDGE_KEYS_FIELD_NUMBER: _ClassVar[int]
    stream: _topology_pb2.StreamId
    src_task_id: int
    values: _containers.RepeatedScalarFieldContainer[bytes]
    key_hash_width: int
    key_hashes: _containers.RepeatedScalarFieldContainer[int]
    dest_counts: _containers.RepeatedScalarFieldContainer[int]
    dest_tasks: _containers.RepeatedScalarFieldContainer[int]
    root_counts: _containers.RepeatedScalarFieldContainer[int]
    root_tasks: _containers.RepeatedScalarFieldContainer[int]
    root_keys: _containers.RepeatedScalarFieldContainer[int]
    edge_keys: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, stream: _Optional[_Union[_topology_pb2.StreamId, _Mapping]] = ..., src_task_id: _Optional[int] = ..., values: _Optional[_Iterable[bytes]] = ..., key_hash_width: _Optional[int] = ..., key_hashes: _Optional[_Iterable[int]] = ..., dest_counts: _Optional[_Iterable[int]] = ..., dest_tasks: _Optional[_Iterable[int]] = ..., root_counts: _Optional[_Iterable[int]] = ..., root_tasks: _Optional[_Iterable[int]] = ..., root_keys: _Optional[_Iterable[int]] = ..., edge_keys: _Optional[_Iterable[int]] = ...) -> None: ...

class ControlBatch(_message.Message):
    __slots__ = ("src_task_id", "kinds", "root_counts", "root_tasks", "root_keys", "tuple_keys")
    SRC_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    ROOT_COUNTS_FIELD_NUMBER: _ClassVar[int]
    ROOT_TASKS_FIELD_NUMBER: _ClassVar[int]
    ROOT_KEYS_FIELD_NUMBER: _ClassVar[int]
    TUPLE_KEYS_FIELD_NUMBER: _ClassVar[int]
    src_task_id: int
    kinds: _containers.RepeatedScalarFieldContainer[ControlKind]
    root_counts: _containers.RepeatedScalarFieldContainer[int]
    root_tasks: _containers.RepeatedScalarFieldContainer[int]
    root_keys: _containers.RepeatedScalarFieldContainer[int]
    tuple_keys: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, src_task_id: _Optional[int] = ..., kinds: _Optional[_Iterable[_Union[ControlKind, str]]] = ..., root_counts: _Optional[_Iterable[int]] = ..., root_tasks: _Optional[_Iterable[int]] = ..., root_keys: _Optional[_Iterable[int]] = ..., tuple_keys: _Optional[_Iterable[int]] = ...) -> None: ...

class TaskDone(_message.Message):
    __slots__ = ("src_task_id", "component")
    SRC_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    src_task_id: int
    component: str
    def __init__(self, src_task_id: _Optional[int] = ..., component: _Optional[str] = ...) -> None: ...
