from . import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LogFileInfo(_message.Message):
    __slots__ = ("name", "size", "mtime")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MTIME_FIELD_NUMBER: _ClassVar[int]
    name: str
    size: int
    mtime: float
    def __init__(self, name: _Optional[str] = ..., size: _Optional[int] = ..., mtime: _Optional[float] = ...) -> None: ...

class ListLogsRequest(_message.Message):
    __slots__ = ("topology_id",)
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    def __init__(self, topology_id: _Optional[str] = ...) -> None: ...

class ListLogsResponse(_message.Message):
    __slots__ = ("status", "files", "container", "host")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    files: _containers.RepeatedCompositeFieldContainer[LogFileInfo]
    container: int
    host: str
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., files: _Optional[_Iterable[_Union[LogFileInfo, _Mapping]]] = ..., container: _Optional[int] = ..., host: _Optional[str] = ...) -> None: ...

class ReadLogRequest(_message.Message):
    __slots__ = ("topology_id", "name", "last_lines", "offset", "max_bytes")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LAST_LINES_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    name: str
    last_lines: int
    offset: int
    max_bytes: int
    def __init__(self, topology_id: _Optional[str] = ..., name: _Optional[str] = ..., last_lines: _Optional[int] = ..., offset: _Optional[int] = ..., max_bytes: _Optional[int] = ...) -> None: ...

class ReadLogResponse(_message.Message):
    __slots__ = ("status", "data", "offset", "size")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    data: bytes
    offset: int
    size: int
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., data: _Optional[bytes] = ..., offset: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...
