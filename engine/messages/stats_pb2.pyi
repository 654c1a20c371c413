from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class StMgrStats(_message.Message):
    __slots__ = ("tuples_received", "tuples_sent", "in_backpressure")
    TUPLES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    TUPLES_SENT_FIELD_NUMBER: _ClassVar[int]
    IN_BACKPRESSURE_FIELD_NUMBER: _ClassVar[int]
    tuples_received: int
    tuples_sent: int
    in_backpressure: bool
    def __init__(self, tuples_received: _Optional[int] = ..., tuples_sent: _Optional[int] = ..., in_backpressure: _Optional[bool] = ...) -> None: ...
