from . import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StatefulConsistentCheckpoint(_message.Message):
    __slots__ = ("checkpoint_id", "packing_plan_id", "completed_at_ms", "duration_secs", "bytes", "components")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PACKING_PLAN_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    DURATION_SECS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    packing_plan_id: str
    completed_at_ms: int
    duration_secs: float
    bytes: int
    components: _containers.RepeatedCompositeFieldContainer[ComponentCheckpoint]
    def __init__(self, checkpoint_id: _Optional[str] = ..., packing_plan_id: _Optional[str] = ..., completed_at_ms: _Optional[int] = ..., duration_secs: _Optional[float] = ..., bytes: _Optional[int] = ..., components: _Optional[_Iterable[_Union[ComponentCheckpoint, _Mapping]]] = ...) -> None: ...

class ComponentCheckpoint(_message.Message):
    __slots__ = ("component", "tasks", "task_state", "bytes", "keyed_bytes")
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    TASK_STATE_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    KEYED_BYTES_FIELD_NUMBER: _ClassVar[int]
    component: str
    tasks: int
    task_state: str
    bytes: int
    keyed_bytes: int
    def __init__(self, component: _Optional[str] = ..., tasks: _Optional[int] = ..., task_state: _Optional[str] = ..., bytes: _Optional[int] = ..., keyed_bytes: _Optional[int] = ...) -> None: ...

class StatefulConsistentCheckpoints(_message.Message):
    __slots__ = ("consistent_checkpoints",)
    CONSISTENT_CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    consistent_checkpoints: _containers.RepeatedCompositeFieldContainer[StatefulConsistentCheckpoint]
    def __init__(self, consistent_checkpoints: _Optional[_Iterable[_Union[StatefulConsistentCheckpoint, _Mapping]]] = ...) -> None: ...

class StartStatefulCheckpoint(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class InitiateStatefulCheckpoint(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class InstanceStateStored(_message.Message):
    __slots__ = ("checkpoint_id", "task_id", "component_name", "bytes", "save_secs", "error", "task_state", "groups_written", "keys_written", "keyed_bytes")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_NAME_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    SAVE_SECS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    TASK_STATE_FIELD_NUMBER: _ClassVar[int]
    GROUPS_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    KEYS_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    KEYED_BYTES_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    task_id: int
    component_name: str
    bytes: int
    save_secs: float
    error: str
    task_state: str
    groups_written: int
    keys_written: int
    keyed_bytes: int
    def __init__(self, checkpoint_id: _Optional[str] = ..., task_id: _Optional[int] = ..., component_name: _Optional[str] = ..., bytes: _Optional[int] = ..., save_secs: _Optional[float] = ..., error: _Optional[str] = ..., task_state: _Optional[str] = ..., groups_written: _Optional[int] = ..., keys_written: _Optional[int] = ..., keyed_bytes: _Optional[int] = ...) -> None: ...

class DownstreamStatefulCheckpoint(_message.Message):
    __slots__ = ("origin_task_id", "destination_task_id", "checkpoint_id", "restore_txid")
    ORIGIN_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    DESTINATION_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    origin_task_id: int
    destination_task_id: int
    checkpoint_id: str
    restore_txid: int
    def __init__(self, origin_task_id: _Optional[int] = ..., destination_task_id: _Optional[int] = ..., checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ...) -> None: ...

class StatefulConsistentCheckpointSaved(_message.Message):
    __slots__ = ("consistent_checkpoint",)
    CONSISTENT_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    consistent_checkpoint: StatefulConsistentCheckpoint
    def __init__(self, consistent_checkpoint: _Optional[_Union[StatefulConsistentCheckpoint, _Mapping]] = ...) -> None: ...

class RestoreTopologyStateRequest(_message.Message):
    __slots__ = ("checkpoint_id", "restore_txid", "reason")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    restore_txid: int
    reason: str
    def __init__(self, checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class RestoreTopologyStateResponse(_message.Message):
    __slots__ = ("status", "checkpoint_id", "restore_txid", "stmgr")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    STMGR_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    checkpoint_id: str
    restore_txid: int
    stmgr: str
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ..., stmgr: _Optional[str] = ...) -> None: ...

class RestoreInstanceStateRequest(_message.Message):
    __slots__ = ("checkpoint_id", "restore_txid")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    restore_txid: int
    def __init__(self, checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ...) -> None: ...

class RestoreInstanceStateResponse(_message.Message):
    __slots__ = ("status", "checkpoint_id", "restore_txid", "task_id")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    checkpoint_id: str
    restore_txid: int
    task_id: int
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ..., task_id: _Optional[int] = ...) -> None: ...

class StartStmgrStatefulProcessing(_message.Message):
    __slots__ = ("checkpoint_id", "restore_txid")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    restore_txid: int
    def __init__(self, checkpoint_id: _Optional[str] = ..., restore_txid: _Optional[int] = ...) -> None: ...

class StartInstanceStatefulProcessing(_message.Message):
    __slots__ = ("checkpoint_id",)
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    def __init__(self, checkpoint_id: _Optional[str] = ...) -> None: ...

class ResetTopologyState(_message.Message):
    __slots__ = ("dead_stmgr", "dead_taskid", "reason")
    DEAD_STMGR_FIELD_NUMBER: _ClassVar[int]
    DEAD_TASKID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    dead_stmgr: str
    dead_taskid: int
    reason: str
    def __init__(self, dead_stmgr: _Optional[str] = ..., dead_taskid: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class InstanceFailed(_message.Message):
    __slots__ = ("task_id", "reason")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    reason: str
    def __init__(self, task_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class SavepointRequest(_message.Message):
    __slots__ = ("topology_name", "savepoint_id", "final")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    SAVEPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    savepoint_id: str
    final: bool
    def __init__(self, topology_name: _Optional[str] = ..., savepoint_id: _Optional[str] = ..., final: _Optional[bool] = ...) -> None: ...

class SavepointResponse(_message.Message):
    __slots__ = ("status", "savepoint_id", "path", "checkpoint_id")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SAVEPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    savepoint_id: str
    path: str
    checkpoint_id: str
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., savepoint_id: _Optional[str] = ..., path: _Optional[str] = ..., checkpoint_id: _Optional[str] = ...) -> None: ...
