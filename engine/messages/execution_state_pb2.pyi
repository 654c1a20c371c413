from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class HeronReleaseState(_message.Message):
    __slots__ = ("release_username", "release_tag", "release_version")
    RELEASE_USERNAME_FIELD_NUMBER: _ClassVar[int]
    RELEASE_TAG_FIELD_NUMBER: _ClassVar[int]
    RELEASE_VERSION_FIELD_NUMBER: _ClassVar[int]
    release_username: str
    release_tag: str
    release_version: str
    def __init__(self, release_username: _Optional[str] = ..., release_tag: _Optional[str] = ..., release_version: _Optional[str] = ...) -> None: ...

class ExecutionState(_message.Message):
    __slots__ = ("topology_name", "topology_id", "submission_time", "submission_user", "cluster", "environ", "role", "release_state")
    TOPOLOGY_NAME_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_TIME_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_USER_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    ENVIRON_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    RELEASE_STATE_FIELD_NUMBER: _ClassVar[int]
    topology_name: str
    topology_id: str
    submission_time: int
    submission_user: str
    cluster: str
    environ: str
    role: str
    release_state: HeronReleaseState
    def __init__(self, topology_name: _Optional[str] = ..., topology_id: _Optional[str] = ..., submission_time: _Optional[int] = ..., submission_user: _Optional[str] = ..., cluster: _Optional[str] = ..., environ: _Optional[str] = ..., role: _Optional[str] = ..., release_state: _Optional[_Union[HeronReleaseState, _Mapping]] = ...) -> None: ...
