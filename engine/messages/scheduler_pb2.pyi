from . import common_pb2 as _common_pb2
from . import packing_plan_pb2 as _packing_plan_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SchedulerLocation(_message.Message):
    __slots__ = ("topology_name", "http_endpoint", "job_page_link")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    HTTP_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    JOB_PAGE_LINK_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    http_endpoint: str
    job_page_link: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, topology_name: _Optional[str] = ..., http_endpoint: _Optional[str] = ..., job_page_link: _Optional[_Iterable[str]] = ...) -> None: ...

class KillTopologyRequest(_message.Message):
    __slots__ = ("topology_name",)
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    def __init__(self, topology_name: _Optional[str] = ...) -> None: ...

class RestartTopologyRequest(_message.Message):
    __slots__ = ("topology_name", "container_index")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_INDEX_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    container_index: int
    def __init__(self, topology_name: _Optional[str] = ..., container_index: _Optional[int] = ...) -> None: ...

class UpdateTopologyRequest(_message.Message):
    __slots__ = ("current_packing_plan", "proposed_packing_plan", "topology_name")
    CURRENT_PACKING_PLAN_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_PACKING_PLAN_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    current_packing_plan: _packing_plan_pb2.PackingPlan
    proposed_packing_plan: _packing_plan_pb2.PackingPlan
    topology_name: str
    def __init__(self, current_packing_plan: _Optional[_Union[_packing_plan_pb2.PackingPlan, _Mapping]] = ..., proposed_packing_plan: _Optional[_Union[_packing_plan_pb2.PackingPlan, _Mapping]] = ..., topology_name: _Optional[str] = ...) -> None: ...

class SchedulerResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ...) -> None: ...
