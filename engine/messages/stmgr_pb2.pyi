from . import common_pb2 as _common_pb2
from . import physical_plan_pb2 as _physical_plan_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NewPhysicalPlanMessage(_message.Message):
    __slots__ = ("new_pplan",)
    NEW_PPLAN_FIELD_NUMBER: _ClassVar[int]
    new_pplan: _physical_plan_pb2.PhysicalPlan
    def __init__(self, new_pplan: _Optional[_Union[_physical_plan_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class RegisterInstanceRequest(_message.Message):
    __slots__ = ("instance", "topology_name", "topology_id", "pid")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    instance: _physical_plan_pb2.Instance
    topology_name: str
    topology_id: str
    pid: int
    def __init__(self, instance: _Optional[_Union[_physical_plan_pb2.Instance, _Mapping]] = ..., topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., pid: _Optional[int] = ...) -> None: ...

class RegisterInstanceResponse(_message.Message):
    __slots__ = ("status", "pplan")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    pplan: _physical_plan_pb2.PhysicalPlan
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ..., pplan: _Optional[_Union[_physical_plan_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class NewInstanceAssignmentMessage(_message.Message):
    __slots__ = ("pplan",)
    PPLAN_FIELD_NUMBER: _ClassVar[int]
    pplan: _physical_plan_pb2.PhysicalPlan
    def __init__(self, pplan: _Optional[_Union[_physical_plan_pb2.PhysicalPlan, _Mapping]] = ...) -> None: ...

class InstanceCredit(_message.Message):
    __slots__ = ("bytes",)
    BYTES_FIELD_NUMBER: _ClassVar[int]
    bytes: int
    def __init__(self, bytes: _Optional[int] = ...) -> None: ...

class StrMgrHelloRequest(_message.Message):
    __slots__ = ("topology_name", "topology_id", "stmgr")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    stmgr: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., stmgr: _Optional[str] = ...) -> None: ...

class StrMgrHelloResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.Status
    def __init__(self, status: _Optional[_Union[_common_pb2.Status, _Mapping]] = ...) -> None: ...

class StartBackPressureMessage(_message.Message):
    __slots__ = ("topology_name", "topology_id", "stmgr", "message_id", "data_endpoint")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    stmgr: str
    message_id: str
    data_endpoint: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., stmgr: _Optional[str] = ..., message_id: _Optional[str] = ..., data_endpoint: _Optional[str] = ...) -> None: ...

class StopBackPressureMessage(_message.Message):
    __slots__ = ("topology_name", "topology_id", "stmgr", "message_id", "data_endpoint")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    STMGR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    DATA_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    stmgr: str
    message_id: str
    data_endpoint: str
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., stmgr: _Optional[str] = ..., message_id: _Optional[str] = ..., data_endpoint: _Optional[str] = ...) -> None: ...

class TupleStreamMessage(_message.Message):
    __slots__ = ("task_id", "src_task_id", "num_tuples", "restore_txid", "data", "control", "done")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SRC_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_TUPLES_FIELD_NUMBER: _ClassVar[int]
    RESTORE_TXID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    task_id: int
    src_task_id: int
    num_tuples: int
    restore_txid: int
    data: bytes
    control: bytes
    done: bytes
    def __init__(self, task_id: _Optional[int] = ..., src_task_id: _Optional[int] = ..., num_tuples: _Optional[int] = ..., restore_txid: _Optional[int] = ..., data: _Optional[bytes] = ..., control: _Optional[bytes] = ..., done: _Optional[bytes] = ...) -> None: ...

class EndOfStream(_message.Message):
    __slots__ = ("sender", "src_task_id", "batches_sent", "tuples_sent")
    SENDER_FIELD_NUMBER: _ClassVar[int]
    SRC_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    BATCHES_SENT_FIELD_NUMBER: _ClassVar[int]
    TUPLES_SENT_FIELD_NUMBER: _ClassVar[int]
    sender: str
    src_task_id: int
    batches_sent: int
    tuples_sent: int
    def __init__(self, sender: _Optional[str] = ..., src_task_id: _Optional[int] = ..., batches_sent: _Optional[int] = ..., tuples_sent: _Optional[int] = ...) -> None: ...

class EndOfStreamAck(_message.Message):
    __slots__ = ("receiver", "sender", "batches_received", "tuples_received")
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    SENDER_FIELD_NUMBER: _ClassVar[int]
    BATCHES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    TUPLES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    receiver: str
    sender: str
    batches_received: int
    tuples_received: int
    def __init__(self, receiver: _Optional[str] = ..., sender: _Optional[str] = ..., batches_received: _Optional[int] = ..., tuples_received: _Optional[int] = ...) -> None: ...
