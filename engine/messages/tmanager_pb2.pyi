from . import common_pb2 as _common_pb2
from . import physical_plan_pb2 as _physical_plan_pb2
from . import stats_pb2 as _stats_pb2
from . import topology_pb2 as _topology_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TManagerLocation(_message.Message):
    __slots__ = ("topology_name", "topology_id", "host", "controller_port", "server_port", "stats_port", "controller_endpoint", "server_endpoint", "shell_endpoint")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_PORT_FIELD_NUMBER: _ClassVar[int]
    SERVER_PORT_FIELD_NUMBER: _ClassVar[int]
    STATS_PORT_FIELD_NUMBER: _ClassVar[int]
    CONTROLLER_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    SERVER_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    SHELL_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    host: str
    controller_port: int
    server_port: int
    stats_port: int
    controller_endpoint: str
    server_endpoint: str
    shell_endpoint: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., host: _Optional[str] = ..., controller_port: _Optional[int] = ..., server_port: _Optional[int] = ..., stats_port: _Optional[int] = ..., controller_endpoint: _Optional[str] = ..., server_endpoint: _Optional[str] = ..., shell_endpoint: _Optional[str] = ...) -> None: ...

class StMgrRegisterRequest(_message.Message):
    __slots__ = ("stmgr", "instances")
    STMGR_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    stmgr: _physical_plan_pb2.StMgr
    instances: _containers.RepeatedCompositeFieldContainer[_physical_plan_pb2.Instance]
    def __init__(self, stmgr: _Optional[_Union[_physical_plan_pb2.StMgr, _Mapping]] = ..., instances: _Optional[_Iterable[_Union[_physical_plan_pb2.Instance, _Mapping]]] = ...) -> None: ...

class StMgrRegisterResponse(_message.Message):
    __slots__ = ("status", "pplan")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    pplan: _physical_plan_pb2.PhysicalPlan
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., pplan: _Optional[_Union[_physical_plan_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class StMgrHeartbeatRequest(_message.Message):
    __slots__ = ("heartbeat_time", "stats")
    HEARTBEAT_TIME_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    heartbeat_time: int
    stats: _stats_pb2.StMgrStats
    def __init__(self, heartbeat_time: _Optional[int] = ..., stats: _Optional[_Union[_stats_pb2.StMgrStats, _Mapping]] = ...) -> None: ...

class StMgrHeartbeatResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ...) -> None: ...

class MetricDatum(_message.Message):
    __slots__ = ("component_name", "instance_id", "name", "value", "timestamp")
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    component_name: str
    instance_id: str
    name: str
    value: str
    timestamp: int
    def __init__(self, component_name: _Optional[str] = ..., instance_id: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[str] = ..., timestamp: _Optional[int] = ...) -> None: ...

class TmanagerExceptionLog(_message.Message):
    __slots__ = ("component_name", "hostname", "instance_id", "stacktrace", "lasttime", "firsttime", "count", "logging")
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    STACKTRACE_FIELD_NUMBER: _ClassVar[int]
    LASTTIME_FIELD_NUMBER: _ClassVar[int]
    FIRSTTIME_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    LOGGING_FIELD_NUMBER: _ClassVar[int]
    component_name: str
    hostname: str
    instance_id: str
    stacktrace: str
    lasttime: str
    firsttime: str
    count: int
    logging: str
    def __init__(self, component_name: _Optional[str] = ..., hostname: _Optional[str] = ..., instance_id: _Optional[str] = ..., stacktrace: _Optional[str] = ..., lasttime: _Optional[str] = ..., firsttime: _Optional[str] = ..., count: _Optional[int] = ..., logging: _Optional[str] = ...) -> None: ...

class PublishMetrics(_message.Message):
    __slots__ = ("metrics", "exceptions")
    METRICS_FIELD_NUMBER: _ClassVar[int]
    EXCEPTIONS_FIELD_NUMBER: _ClassVar[int]
    metrics: _containers.RepeatedCompositeFieldContainer[MetricDatum]
    exceptions: _containers.RepeatedCompositeFieldContainer[TmanagerExceptionLog]
    def __init__(self, metrics: _Optional[_Iterable[_Union[MetricDatum, _Mapping]]] = ..., exceptions: _Optional[_Iterable[_Union[TmanagerExceptionLog, _Mapping]]] = ...) -> None: ...

class MetricInterval(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class MetricRequest(_message.Message):
    __slots__ = ("component_name", "instance_id", "metric", "interval", "explicit_interval", "minutely")
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    MINUTELY_FIELD_NUMBER: _ClassVar[int]
    component_name: str
    instance_id: _containers.RepeatedScalarFieldContainer[str]
    metric: _containers.RepeatedScalarFieldContainer[str]
    interval: int
    explicit_interval: MetricInterval
    minutely: bool
    def __init__(self, component_name: _Optional[str] = ..., instance_id: _Optional[_Iterable[str]] = ..., metric: _Optional[_Iterable[str]] = ..., interval: _Optional[int] = ..., explicit_interval: _Optional[_Union[MetricInterval, _Mapping]] = ..., minutely: _Optional[bool] = ...) -> None: ...

class MetricResponse(_message.Message):
    __slots__ = ("status", "metric", "interval")
    class IndividualMetric(_message.Message):
        __slots__ = ("name", "value", "interval_values")
        class IntervalValue(_message.Message):
            __slots__ = ("value", "interval")
            VALUE_FIELD_NUMBER: _ClassVar[int]
            INTERVAL_FIELD_NUMBER: _ClassVar[int]
            value: str
            interval: MetricInterval
            def __init__(self, value: _Optional[str] = ..., interval: _Optional[_Union[MetricInterval, _Mapping]] = ...) -> None: ...
        NAME_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        INTERVAL_VALUES_FIELD_NUMBER: _ClassVar[int]
        name: str
        value: str
        interval_values: _containers.RepeatedCompositeFieldContainer[MetricResponse.IndividualMetric.IntervalValue]
        def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ..., interval_values: _Optional[_Iterable[_Union[MetricResponse.IndividualMetric.IntervalValue, _Mapping]]] = ...) -> None: ...
    class TaskMetric(_message.Message):
        __slots__ = ("instance_id", "metric")
        INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
        METRIC_FIELD_NUMBER: _ClassVar[int]
        instance_id: str
        metric: _containers.RepeatedCompositeFieldContainer[MetricResponse.IndividualMetric]
        def __init__(self, instance_id: _Optional[str] = ..., metric: _Optional[_Iterable[_Union[MetricResponse.IndividualMetric, _Mapping]]] = ...) -> None: ...
    STATUS_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    metric: _containers.RepeatedCompositeFieldContainer[MetricResponse.TaskMetric]
    interval: int
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., metric: _Optional[_Iterable[_Union[MetricResponse.TaskMetric, _Mapping]]] = ..., interval: _Optional[int] = ...) -> None: ...

class ExceptionLogRequest(_message.Message):
    __slots__ = ("component_name", "instances")
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    component_name: str
    instances: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, component_name: _Optional[str] = ..., instances: _Optional[_Iterable[str]] = ...) -> None: ...

class ExceptionLogResponse(_message.Message):
    __slots__ = ("status", "exceptions")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EXCEPTIONS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    exceptions: _containers.RepeatedCompositeFieldContainer[TmanagerExceptionLog]
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., exceptions: _Optional[_Iterable[_Union[TmanagerExceptionLog, _Mapping]]] = ...) -> None: ...

class StmgrsRegistrationSummaryRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StmgrsRegistrationSummaryResponse(_message.Message):
    __slots__ = ("registered_stmgrs", "absent_stmgrs")
    REGISTERED_STMGRS_FIELD_NUMBER: _ClassVar[int]
    ABSENT_STMGRS_FIELD_NUMBER: _ClassVar[int]
    registered_stmgrs: _containers.RepeatedScalarFieldContainer[str]
    absent_stmgrs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, registered_stmgrs: _Optional[_Iterable[str]] = ..., absent_stmgrs: _Optional[_Iterable[str]] = ...) -> None: ...

class TopologyActivateRequest(_message.Message):
    __slots__ = ("topology_name", "topology_id")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ...) -> None: ...

class TopologyDeactivateRequest(_message.Message):
    __slots__ = ("topology_name", "topology_id")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ...) -> None: ...

class RuntimeConfigUpdateRequest(_message.Message):
    __slots__ = ("topology_name", "topology_id", "topology_config", "component_configs")
    class ComponentConfig(_message.Message):
        __slots__ = ("component_name", "config")
        COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
        CONFIG_FIELD_NUMBER: _ClassVar[int]
        component_name: str
        config: _topology_pb2.Config
        def __init__(self, component_name: _Optional[str] = ..., config: _Optional[_Union[_topology_pb2.Config, _Mapping]] = ...) -> None: ...
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_CONFIG_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_CONFIGS_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    topology_config: _topology_pb2.Config
    component_configs: _containers.RepeatedCompositeFieldContainer[RuntimeConfigUpdateRequest.ComponentConfig]
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., topology_config: _Optional[_Union[_topology_pb2.Config, _Mapping]] = ..., component_configs: _Optional[_Iterable[_Union[RuntimeConfigUpdateRequest.ComponentConfig, _Mapping]]] = ...) -> None: ...

class TopologyControlResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ...) -> None: ...
