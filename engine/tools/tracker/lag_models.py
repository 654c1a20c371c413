"""The tracker's response shapes for ``/topologies/sourcelag``: Kafka spouts' consumer
lag per partition and per component (pydantic, so /openapi.json documents them).

They sit beside ``engine.tools.tracker.models`` rather than in it, one job per module (as
``checkpoint_models`` does for checkpoints); the names follow its ``...Model``
convention and the answer is built in ``engine.tools.tracker.answers`` like every other.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class PartitionLagModel(BaseModel):
    """One partition as one spout instance consumes it (Storm's ``kafkaOffset/<topic>/
    partition_<n>/...`` figures); an offset the spout does not report is null."""

    component: str
    instance: str
    task_id: int | None
    topic: str
    partition: int
    lag: int | None = Field(description="log end offset minus the spout's position "
                                        "(spoutLag), never below 0")
    emitted_offset: int | None = Field(description="the last offset emitted "
                                                   "(latestEmittedOffset)")
    committed_offset: int | None = Field(description="the last offset committed "
                                                     "(latestCompletedOffset)")
    earliest_offset: int | None = Field(description="the log's first offset "
                                                    "(earliestTimeOffset)")
    end_offset: int | None = Field(description="the log end offset (latestTimeOffset)")
    stale_secs: float | None = Field(default=None, description="seconds since the instance last "
                                                       "reported, when over 5 s (frozen)")


class ComponentLagModel(BaseModel):
    """One Kafka spout component's lag over all its partitions."""

    component: str
    lag: int = Field(description="summed over its partitions (an instance reporting no "
                                 "partition counts with its totalSpoutLag)")
    max_lag: int = Field(description="the largest lag of one partition")
    partitions: int
    topics: list[str]
    instances: int = Field(description="instances that report Kafka offsets")


class SourceLagModel(BaseModel):
    """Consumer lag of the topology's Kafka spouts; empty lists (and a ``note``) when no
    instance reports any, which the page takes as "no Kafka lag card"."""

    topology: str
    partitions: list[PartitionLagModel] = Field(
        default_factory=list, description="by component, topic, partition, instance")
    components: list[ComponentLagModel] = Field(default_factory=list)
    note: str = Field(default="", description="why the lists are empty, in one sentence")
    endtime: float | None = Field(default=None, description="unix time of the Topology Master's "
                                                    "answer")
