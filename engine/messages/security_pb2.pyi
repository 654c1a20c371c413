from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class TopologyKeys(_message.Message):
    __slots__ = ("topology_name", "public_key", "secret_key", "topology_id", "plaintext")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_KEY_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    PLAINTEXT_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    public_key: bytes
    secret_key: bytes
    topology_id: str
    plaintext: bool
    def __init__(self, topology_name: _Optional[str] = ..., public_key: _Optional[bytes] = ..., secret_key: _Optional[bytes] = ..., topology_id: _Optional[str] = ..., plaintext: _Optional[bool] = ...) -> None: ...
