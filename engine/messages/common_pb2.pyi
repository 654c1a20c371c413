from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StatusCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OK: _ClassVar[StatusCode]
    NOTOK: _ClassVar[StatusCode]
    INVALID_TOPOLOGY_NAME: _ClassVar[StatusCode]
    TOPOLOGY_ALREADY_ACTIVE: _ClassVar[StatusCode]
    TOPOLOGY_ALREADY_DEACTIVE: _ClassVar[StatusCode]
    NOT_YET_IMPLEMENTED: _ClassVar[StatusCode]
    INVALID_STMGR: _ClassVar[StatusCode]
    STMGR_DIDNT_REGISTER: _ClassVar[StatusCode]
    DUPLICATE_STRMGR: _ClassVar[StatusCode]
    PATH_DOES_NOT_EXIST: _ClassVar[StatusCode]
    PATH_ALREADY_EXISTS: _ClassVar[StatusCode]
    TMANAGERLOCATION_ALREADY_EXISTS: _ClassVar[StatusCode]
    STATE_CORRUPTED: _ClassVar[StatusCode]
    STATE_READ_ERROR: _ClassVar[StatusCode]
    STATE_WRITE_ERROR: _ClassVar[StatusCode]
    METRICSCACHELOCATION_ALREADY_EXISTS: _ClassVar[StatusCode]
OK: StatusCode
NOTOK: StatusCode
INVALID_TOPOLOGY_NAME: StatusCode
TOPOLOGY_ALREADY_ACTIVE: StatusCode
TOPOLOGY_ALREADY_DEACTIVE: StatusCode
NOT_YET_IMPLEMENTED: StatusCode
INVALID_STMGR: StatusCode
STMGR_DIDNT_REGISTER: StatusCode
DUPLICATE_STRMGR: StatusCode
PATH_DOES_NOT_EXIST: StatusCode
PATH_ALREADY_EXISTS: StatusCode
TMANAGERLOCATION_ALREADY_EXISTS: StatusCode
STATE_CORRUPTED: StatusCode
STATE_READ_ERROR: StatusCode
STATE_WRITE_ERROR: StatusCode
METRICSCACHELOCATION_ALREADY_EXISTS: StatusCode

class Status(_message.Message):
    __slots__ = ("status", "message")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    status: StatusCode
    message: str
    def __init__(self, status: _Optional[_Union[StatusCode, str]] = ..., message: _Optional[str] = ...) -> None: ...
