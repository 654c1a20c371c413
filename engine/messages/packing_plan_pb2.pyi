from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Resource(_message.Message):
    __slots__ = ("cpu", "ram", "disk")
    CPU_FIELD_NUMBER: _ClassVar[int]
    RAM_FIELD_NUMBER: _ClassVar[int]
    DISK_FIELD_NUMBER: _ClassVar[int]
    cpu: float
    ram: int
    disk: int
    def __init__(self, cpu: _Optional[float] = ..., ram: _Optional[int] = ..., disk: _Optional[int] = ...) -> None: ...

class InstancePlan(_message.Message):
    __slots__ = ("component_name", "task_id", "component_index", "resource")
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_INDEX_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    component_name: str
    task_id: int
    component_index: int
    resource: Resource
    def __init__(self, component_name: _Optional[str] = ..., task_id: _Optional[int] = ..., component_index: _Optional[int] = ..., resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class ContainerPlan(_message.Message):
    __slots__ = ("id", "instance_plans", "required_resource", "scheduled_resource")
    ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_PLANS_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_RESOURCE_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_RESOURCE_FIELD_NUMBER: _ClassVar[int]
    id: int
    instance_plans: _containers.RepeatedCompositeFieldContainer[InstancePlan]
    required_resource: Resource
    scheduled_resource: Resource
    def __init__(self, id: _Optional[int] = ..., instance_plans: _Optional[_Iterable[_Union[InstancePlan, _Mapping]]] = ..., required_resource: _Optional[_Union[Resource, _Mapping]] = ..., scheduled_resource: _Optional[_Union[Resource, _Mapping]] = ...) -> None: ...

class PackingPlan(_message.Message):
    __slots__ = ("id", "container_plans")
    ID_FIELD_NUMBER: _ClassVar[int]
    CONTAINER_PLANS_FIELD_NUMBER: _ClassVar[int]
    id: str
    container_plans: _containers.RepeatedCompositeFieldContainer[ContainerPlan]
    def __init__(self, id: _Optional[str] = ..., container_plans: _Optional[_Iterable[_Union[ContainerPlan, _Mapping]]] = ...) -> None: ...
