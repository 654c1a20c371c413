from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Grouping(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SHUFFLE: _ClassVar[Grouping]
    FIELDS: _ClassVar[Grouping]
    ALL: _ClassVar[Grouping]
    LOWEST: _ClassVar[Grouping]
    NONE: _ClassVar[Grouping]
    DIRECT: _ClassVar[Grouping]
    CUSTOM: _ClassVar[Grouping]
    LOCAL_OR_SHUFFLE: _ClassVar[Grouping]

class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBJECT: _ClassVar[Type]

class ComponentObjectSpec(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JAVA_CLASS_NAME: _ClassVar[ComponentObjectSpec]
    JAVA_SERIALIZED_OBJECT: _ClassVar[ComponentObjectSpec]
    PYTHON_CLASS_NAME: _ClassVar[ComponentObjectSpec]
    CPP_CLASS_INFO: _ClassVar[ComponentObjectSpec]
    SHELL_COMMAND: _ClassVar[ComponentObjectSpec]

class CustomGroupingObjectType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JAVA_OBJECT: _ClassVar[CustomGroupingObjectType]
    PYTHON_OBJECT: _ClassVar[CustomGroupingObjectType]
    JAVA_CLASS_AND_ARGS: _ClassVar[CustomGroupingObjectType]

class ConfigValueType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRING_VALUE: _ClassVar[ConfigValueType]
    JAVA_SERIALIZED_VALUE: _ClassVar[ConfigValueType]
    PYTHON_SERIALIZED_VALUE: _ClassVar[ConfigValueType]
    JSON_VALUE: _ClassVar[ConfigValueType]

class TopologyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUNNING: _ClassVar[TopologyState]
    PAUSED: _ClassVar[TopologyState]
    KILLED: _ClassVar[TopologyState]
SHUFFLE: Grouping
FIELDS: Grouping
ALL: Grouping
LOWEST: Grouping
NONE: Grouping
DIRECT: Grouping
CUSTOM: Grouping
LOCAL_OR_SHUFFLE: Grouping
OBJECT: Type
JAVA_CLASS_NAME: ComponentObjectSpec
JAVA_SERIALIZED_OBJECT: ComponentObjectSpec
PYTHON_CLASS_NAME: ComponentObjectSpec
CPP_CLASS_INFO: ComponentObjectSpec
SHELL_COMMAND: ComponentObjectSpec
JAVA_OBJECT: CustomGroupingObjectType
PYTHON_OBJECT: CustomGroupingObjectType
JAVA_CLASS_AND_ARGS: CustomGroupingObjectType
STRING_VALUE: ConfigValueType
JAVA_SERIALIZED_VALUE: ConfigValueType
PYTHON_SERIALIZED_VALUE: ConfigValueType
JSON_VALUE: ConfigValueType
RUNNING: TopologyState
PAUSED: TopologyState
KILLED: TopologyState

class StreamSchema(_message.Message):
    __slots__ = ("keys",)
    class KeyType(_message.Message):
        __slots__ = ("key", "type")
        KEY_FIELD_NUMBER: _ClassVar[int]
        TYPE_FIELD_NUMBER: _ClassVar[int]
        key: str
        type: Type
        def __init__(self, key: _Optional[str] = ..., type: _Optional[_Union[Type, str]] = ...) -> None: ...
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[StreamSchema.KeyType]
    def __init__(self, keys: _Optional[_Iterable[_Union[StreamSchema.KeyType, _Mapping]]] = ...) -> None: ...

class StreamId(_message.Message):
    __slots__ = ("id", "component_name")
    ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    component_name: str
    def __init__(self, id: _Optional[str] = ..., component_name: _Optional[str] = ...) -> None: ...

class OutputStream(_message.Message):
    __slots__ = ("stream", "schema", "direct")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    DIRECT_FIELD_NUMBER: _ClassVar[int]
    stream: StreamId
    schema: StreamSchema
    direct: bool
    def __init__(self, stream: _Optional[_Union[StreamId, _Mapping]] = ..., schema: _Optional[_Union[StreamSchema, _Mapping]] = ..., direct: _Optional[bool] = ...) -> None: ...

class InputStream(_message.Message):
    __slots__ = ("stream", "gtype", "grouping_fields", "custom_grouping_object", "type")
    STREAM_FIELD_NUMBER: _ClassVar[int]
    GTYPE_FIELD_NUMBER: _ClassVar[int]
    GROUPING_FIELDS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_GROUPING_OBJECT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    stream: StreamId
    gtype: Grouping
    grouping_fields: StreamSchema
    custom_grouping_object: bytes
    type: CustomGroupingObjectType
    def __init__(self, stream: _Optional[_Union[StreamId, _Mapping]] = ..., gtype: _Optional[_Union[Grouping, str]] = ..., grouping_fields: _Optional[_Union[StreamSchema, _Mapping]] = ..., custom_grouping_object: _Optional[bytes] = ..., type: _Optional[_Union[CustomGroupingObjectType, str]] = ...) -> None: ...

class Config(_message.Message):
    __slots__ = ("kvs",)
    class KeyValue(_message.Message):
        __slots__ = ("key", "value", "serialized_value", "type")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        SERIALIZED_VALUE_FIELD_NUMBER: _ClassVar[int]
        TYPE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        serialized_value: bytes
        type: ConfigValueType
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., serialized_value: _Optional[bytes] = ..., type: _Optional[_Union[ConfigValueType, str]] = ...) -> None: ...
    KVS_FIELD_NUMBER: _ClassVar[int]
    kvs: _containers.RepeatedCompositeFieldContainer[Config.KeyValue]
    def __init__(self, kvs: _Optional[_Iterable[_Union[Config.KeyValue, _Mapping]]] = ...) -> None: ...

class ShellComponent(_message.Message):
    __slots__ = ("execution_command", "script")
    EXECUTION_COMMAND_FIELD_NUMBER: _ClassVar[int]
    SCRIPT_FIELD_NUMBER: _ClassVar[int]
    execution_command: str
    script: str
    def __init__(self, execution_command: _Optional[str] = ..., script: _Optional[str] = ...) -> None: ...

class Component(_message.Message):
    __slots__ = ("name", "class_name", "serialized_object", "config", "spec", "shell")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    SERIALIZED_OBJECT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    SHELL_FIELD_NUMBER: _ClassVar[int]
    name: str
    class_name: str
    serialized_object: bytes
    config: Config
    spec: ComponentObjectSpec
    shell: ShellComponent
    def __init__(self, name: _Optional[str] = ..., class_name: _Optional[str] = ..., serialized_object: _Optional[bytes] = ..., config: _Optional[_Union[Config, _Mapping]] = ..., spec: _Optional[_Union[ComponentObjectSpec, str]] = ..., shell: _Optional[_Union[ShellComponent, _Mapping]] = ...) -> None: ...

class Spout(_message.Message):
    __slots__ = ("comp", "outputs")
    COMP_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    comp: Component
    outputs: _containers.RepeatedCompositeFieldContainer[OutputStream]
    def __init__(self, comp: _Optional[_Union[Component, _Mapping]] = ..., outputs: _Optional[_Iterable[_Union[OutputStream, _Mapping]]] = ...) -> None: ...

class Bolt(_message.Message):
    __slots__ = ("comp", "inputs", "outputs")
    COMP_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    comp: Component
    inputs: _containers.RepeatedCompositeFieldContainer[InputStream]
    outputs: _containers.RepeatedCompositeFieldContainer[OutputStream]
    def __init__(self, comp: _Optional[_Union[Component, _Mapping]] = ..., inputs: _Optional[_Iterable[_Union[InputStream, _Mapping]]] = ..., outputs: _Optional[_Iterable[_Union[OutputStream, _Mapping]]] = ...) -> None: ...

class Topology(_message.Message):
    __slots__ = ("id", "name", "spouts", "bolts", "state", "topology_config", "component_order")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SPOUTS_FIELD_NUMBER: _ClassVar[int]
    BOLTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_CONFIG_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_ORDER_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    spouts: _containers.RepeatedCompositeFieldContainer[Spout]
    bolts: _containers.RepeatedCompositeFieldContainer[Bolt]
    state: TopologyState
    topology_config: Config
    component_order: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., spouts: _Optional[_Iterable[_Union[Spout, _Mapping]]] = ..., bolts: _Optional[_Iterable[_Union[Bolt, _Mapping]]] = ..., state: _Optional[_Union[TopologyState, str]] = ..., topology_config: _Optional[_Union[Config, _Mapping]] = ..., component_order: _Optional[_Iterable[str]] = ...) -> None: ...
