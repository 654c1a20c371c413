from . import common_pb2 as _common_pb2
from . import tmanager_pb2 as _tmanager_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MetricDatum(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class ExceptionData(_message.Message):
    __slots__ = ("stacktrace", "lasttime", "firsttime", "count", "logging")
    STACKTRACE_FIELD_NUMBER: _ClassVar[int]
    LASTTIME_FIELD_NUMBER: _ClassVar[int]
    FIRSTTIME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LOGGING_FIELD_NUMBER: _ClassVar[int]
    stacktrace: str
    lasttime: str
    firsttime: str
    count: int
    logging: str
    def __init__(self, stacktrace: _Optional[str] = ..., lasttime: _Optional[str] = ..., firsttime: _Optional[str] = ..., count: _Optional[int] = ..., logging: _Optional[str] = ...) -> None: ...

class MetricPublisher(_message.Message):
    __slots__ = ("hostname", "port", "component_name", "instance_id", "instance_index")
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_INDEX_FIELD_NUMBER: _ClassVar[int]
    hostname: str
    port: int
    component_name: str
    instance_id: str
    instance_index: int
    def __init__(self, hostname: _Optional[str] = ..., port: _Optional[int] = ..., component_name: _Optional[str] = ..., instance_id: _Optional[str] = ..., instance_index: _Optional[int] = ...) -> None: ...

class MetricPublisherRegisterRequest(_message.Message):
    __slots__ = ("publisher",)
    PUBLISHER_FIELD_NUMBER: _ClassVar[int]
    publisher: MetricPublisher
    def __init__(self, publisher: _Optional[_Union[MetricPublisher, _Mapping]] = ...) -> None: ...

class MetricPublisherRegisterResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ...) -> None: ...

class MetricPublisherPublishMessage(_message.Message):
    __slots__ = ("metrics", "exceptions")
    METRICS_FIELD_NUMBER: _ClassVar[int]
    EXCEPTIONS_FIELD_NUMBER: _ClassVar[int]
    metrics: _containers.RepeatedCompositeFieldContainer[MetricDatum]
    exceptions: _containers.RepeatedCompositeFieldContainer[ExceptionData]
    def __init__(self, metrics: _Optional[_Iterable[_Union[MetricDatum, _Mapping]]] = ..., exceptions: _Optional[_Iterable[_Union[ExceptionData, _Mapping]]] = ...) -> None: ...

class TManagerLocationRefreshMessage(_message.Message):
    __slots__ = ("tmanager",)
    TMANAGER_FIELD_NUMBER: _ClassVar[int]
    tmanager: _tmanager_pb2.TManagerLocation
    def __init__(self, tmanager: _Optional[_Union[_tmanager_pb2.TManagerLocation, _Mapping]] = ...) -> None: ...
