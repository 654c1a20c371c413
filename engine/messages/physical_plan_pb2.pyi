from . import topology_pb2 as _topology_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StMgr(_message.Message):
    __slots__ = ("id", "host_name", "data_port", "local_data_port", "local_endpoint", "cwd", "pid", "shell_port", "data_endpoint", "container_id", "incarnation", "shell_endpoint")
    ID_FIELD_NUMBER: _ClassVar[int]
    HOST_NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_PORT_FIELD_NUMBER: _ClassVar[int]
    LOCAL_DATA_PORT_FIELD_NUMBER: _ClassVar[int]
    LOCAL_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    SHELL_PORT_FIELD_NUMBER: _ClassVar[int]
    DATA_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_ID_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    SHELL_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    id: str
    host_name: str
    data_port: int
    local_data_port: int
    local_endpoint: str
    cwd: str
    pid: int
    shell_port: int
    data_endpoint: str
    container_id: int
    incarnation: int
    shell_endpoint: str
    def __init__(self, id: _Optional[str] = ..., host_name: _Optional[str] = ..., data_port: _Optional[int] = ..., local_data_port: _Optional[int] = ..., local_endpoint: _Optional[str] = ..., cwd: _Optional[str] = ..., pid: _Optional[int] = ..., shell_port: _Optional[int] = ..., data_endpoint: _Optional[str] = ..., container_id: _Optional[int] = ..., incarnation: _Optional[int] = ..., shell_endpoint: _Optional[str] = ...) -> None: ...

class InstanceInfo(_message.Message):
    __slots__ = ("task_id", "component_index", "component_name", "params", "remote_debugger_port")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    REMOTE_DEBUGGER_PORT_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    component_index: int
    component_name: str
    params: _containers.RepeatedScalarFieldContainer[str]
    remote_debugger_port: int
    def __init__(self, task_id: _Optional[int] = ..., component_index: _Optional[int] = ..., component_name: _Optional[str] = ..., params: _Optional[_Iterable[str]] = ..., remote_debugger_port: _Optional[int] = ...) -> None: ...

class Instance(_message.Message):
    __slots__ = ("instance_id", "stmgr_id", "info")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_ID_FIELD_NUMBER: _ClassVar[int]
    INFO_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    stmgr_id: str
    info: InstanceInfo
    def __init__(self, instance_id: _Optional[str] = ..., stmgr_id: _Optional[str] = ..., info: _Optional[_Union[InstanceInfo, _Mapping]] = ...) -> None: ...

class PhysicalPlan(_message.Message):
    __slots__ = ("topology", "stmgrs", "instances")
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    STMGRS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    topology: _topology_pb2.Topology
    stmgrs: _containers.RepeatedCompositeFieldContainer[StMgr]
    instances: _containers.RepeatedCompositeFieldContainer[Instance]
    def __init__(self, topology: _Optional[_Union[_topology_pb2.Topology, _Mapping]] = ..., stmgrs: _Optional[_Iterable[_Union[StMgr, _Mapping]]] = ..., instances: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ...) -> None: ...
