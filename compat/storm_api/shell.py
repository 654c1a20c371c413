"""Components that are not Python classes: shell commands and JVM classes.

A topology declares them by subclassing (``class Counter(ShellBolt): ...``) or by using
the classes directly (``ShellBolt.spec(command="node", script="counter.js", ...)``).
Unlike Python spouts and bolts, their outputs (and, for Java, parallelism default)
come from ``spec()`` arguments, since there is no Python class body to read them from.
Signatures and defaults are streamparse's (``streamparse.storm.spout``/``bolt``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .component import Component
from .dsl.component import JavaBoltSpec, JavaSpoutSpec, ShellBoltSpec, ShellSpoutSpec
from .dsl.stream import Stream

__all__ = ["JavaBolt", "JavaSpout", "ShellBolt", "ShellSpout"]

class ShellSpout(Component):
    """A spout Storm runs as ``command script``, speaking the multi-lang protocol."""

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        command: str | None = None,
        script: str | None = None,
        par: int | dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> ShellSpoutSpec:
        """Declare this spout in a Topology; ``script`` is ``command``'s arguments."""
        return ShellSpoutSpec(
            cls,
            command=command,
            script=script,
            name=name,
            par=par,
            config=config,
            outputs=outputs,
        )


class ShellBolt(Component):
    """A bolt Storm runs as ``command script``, speaking the multi-lang protocol."""

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        command: str | None = None,
        script: str | None = None,
        inputs: Any = None,
        par: int | dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> ShellBoltSpec:
        """Declare this bolt in a Topology; ``script`` is ``command``'s arguments."""
        return ShellBoltSpec(
            cls,
            command=command,
            script=script,
            name=name,
            inputs=inputs,
            par=par,
            config=config,
            outputs=outputs,
        )


class JavaSpout(Component):
    """A JVM spout: serialized Java, or a class name and constructor arguments."""

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        serialized_java: bytes | None = None,
        full_class_name: str | None = None,
        args_list: Sequence[Any] | None = None,
        par: int | dict[str, Any] | None = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> JavaSpoutSpec:
        """Declare this spout in a Topology; ``par`` defaults to 1, as in streamparse."""
        return JavaSpoutSpec(
            cls,
            name=name,
            serialized_java=serialized_java,
            full_class_name=full_class_name,
            args_list=args_list,
            par=par,
            config=config,
            outputs=outputs,
        )


class JavaBolt(Component):
    """A JVM bolt: serialized Java, or a class name and constructor arguments."""

    @classmethod
    def spec(
        cls,
        name: str | None = None,
        serialized_java: bytes | None = None,
        full_class_name: str | None = None,
        args_list: Sequence[Any] | None = None,
        inputs: Any = None,
        par: int | dict[str, Any] | None = 1,
        config: dict[str, Any] | None = None,
        outputs: Sequence[str | Stream] | None = None,
    ) -> JavaBoltSpec:
        """Declare this bolt in a Topology; ``par`` defaults to 1, as in streamparse."""
        return JavaBoltSpec(
            cls,
            name=name,
            serialized_java=serialized_java,
            full_class_name=full_class_name,
            args_list=args_list,
            inputs=inputs,
            par=par,
            config=config,
            outputs=outputs,
        )
