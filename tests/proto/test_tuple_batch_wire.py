"""Wire properties of the columnar tuple messages that the hot path relies on."""

from __future__ import annotations

from engine.messages import stmgr_pb2, topology_pb2, tuple_pb2

N = 1000


def test_tuple_batch_round_trips_every_column():
    batch = tuple_pb2.TupleBatch(
        stream=topology_pb2.StreamId(id="default", component_name="word-spout"),
        src_task_id=3,
        values=[b"\x91\xa3cat", b"\x91\xa3dog"],
        key_hash_width=2,
        key_hashes=[1, 2, 3, 2**32 - 1],
        dest_counts=[0, 2],
        dest_tasks=[7, 9],
        root_counts=[1, 2],
        root_tasks=[1, 1, 2],
        root_keys=[5, 2**64 - 1, 6],
        edge_keys=[11, 12],
    )

    decoded = tuple_pb2.TupleBatch.FromString(batch.SerializeToString())

    assert decoded == batch
    assert list(decoded.root_keys) == [5, 2**64 - 1, 6]  # full unsigned 64-bit keys


def test_metadata_columns_are_packed_so_a_column_costs_one_tag_per_batch():
    hashes = tuple_pb2.TupleBatch(key_hashes=[0xDEADBEEF] * N).SerializeToString()
    keys = tuple_pb2.TupleBatch(edge_keys=[2**63] * N).SerializeToString()
    counts = tuple_pb2.ControlBatch(root_counts=[1] * N).SerializeToString()

    assert len(hashes) <= 4 * N + 8  # fixed32 payload + one tag and length
    assert len(keys) <= 8 * N + 8
    assert len(counts) <= N + 8


def test_control_batch_keeps_the_kind_of_every_entry_in_order():
    batch = tuple_pb2.ControlBatch(
        src_task_id=4,
        kinds=[tuple_pb2.EMIT, tuple_pb2.ACK, tuple_pb2.FAIL],
        root_counts=[1, 1, 1],
        root_tasks=[1, 1, 2],
        root_keys=[10, 10, 20],
        tuple_keys=[99, 98, 0],
    )

    decoded = tuple_pb2.ControlBatch.FromString(batch.SerializeToString())

    assert list(decoded.kinds) == [tuple_pb2.EMIT, tuple_pb2.ACK, tuple_pb2.FAIL]


def test_tuple_stream_message_carries_either_a_data_or_a_control_batch():
    data = stmgr_pb2.TupleStreamMessage(
        task_id=5, data=tuple_pb2.TupleBatch(values=[b"x"]).SerializeToString()
    )
    control = stmgr_pb2.TupleStreamMessage(task_id=5, control=b"")

    assert data.WhichOneof("set") == "data"
    assert control.WhichOneof("set") == "control"
    data.control = b"\x08\x01"
    assert data.WhichOneof("set") == "control"


def test_storm_extensions_keep_clear_of_heron_numbers():
    assert topology_pb2.LOCAL_OR_SHUFFLE >= 100
    assert topology_pb2.SHELL_COMMAND >= 100
    assert topology_pb2.JSON_VALUE >= 100
    assert topology_pb2.LOWEST == 4  # Heron's own value for Storm's global grouping
