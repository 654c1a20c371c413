from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class HealthState(_message.Message):
    __slots__ = ("topology_id", "loop_state_json", "records_json")
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    LOOP_STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    RECORDS_JSON_FIELD_NUMBER: _ClassVar[int]
    topology_id: str
    loop_state_json: str
    records_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, topology_id: _Optional[str] = ..., loop_state_json: _Optional[str] = ..., records_json: _Optional[_Iterable[str]] = ...) -> None: ...
