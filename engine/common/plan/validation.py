"""The rules a logical plan must satisfy before any engine runs it.

They are Storm's submit-time checks (Nimbus's validate-structure and validate-ids)
plus streamparse's DSL checks, applied to every plan whatever produced it (the
Storm-API compiler, the Summingbird planner, bytes read back from a state manager),
so an engine never meets a half-valid topology. Checks run in a fixed order and the
first failure is raised.

Two rules go beyond Storm, and why:

* A direct grouping on a stream not declared ``direct=True`` is rejected. Storm's
  documentation forbids it, though Storm itself only fails later, on the first
  regular emit ("Cannot do regular emit to direct stream"). The opposite case, a
  direct stream consumed with a regular grouping, is accepted as Storm accepts it
  (streamparse even produces it for ``inputs=[spec["stream"]]``); emitting to it
  with ``direct_task`` then fails at run time, as in Storm.
* A cycle made only of default-stream subscriptions is rejected: Storm lets a
  topology loop back through a named stream (a feedback stream), but a loop on
  default streams is almost always a wiring mistake that would circulate tuples
  forever.
"""

from __future__ import annotations

from collections.abc import Mapping

from .constants import (
    BOLT,
    DEFAULT_STREAM,
    GROUPINGS,
    KINDS,
    PARALLELISM_CONFIG_KEY,
    SPOUT,
    SYSTEM_PREFIX,
)
from .definitions import ComponentDef, InputDef
from .errors import (
    CycleError,
    DirectGroupingError,
    DuplicateFieldError,
    InvalidComponentError,
    InvalidConfigError,
    InvalidGroupingError,
    InvalidParallelismError,
    MissingInputsError,
    MissingOutputsError,
    ReservedNameError,
    SpoutInputsError,
    UnknownComponentError,
    UnknownFieldError,
    UnknownStreamError,
)

#: PARALLELISM_CONFIG_KEY and SYSTEM_PREFIX live in ``constants`` and stay importable here.
__all__ = ["PARALLELISM_CONFIG_KEY", "SYSTEM_PREFIX", "validate_components"]


def validate_components(topology: str, components: Mapping[str, ComponentDef]) -> None:
    """Raise the first PlanningError the components of ``topology`` violate."""
    for component in components.values():
        _check_component(component)
    for component in components.values():
        seen: set[tuple[str, str]] = set()
        for subscription in component.inputs:
            _check_input(topology, component, subscription, components)
            key = (subscription.source, subscription.stream)
            if key in seen:
                raise InvalidGroupingError(
                    f"bolt {component.name!r} subscribes twice to stream "
                    f"{subscription.stream!r} of {subscription.source!r}; each stream can be "
                    f"subscribed once per bolt. Keep one of the two inputs.",
                    component=component.name,
                    stream=subscription.stream,
                )
            seen.add(key)
    _check_default_stream_cycles(topology, components)


def _check_component(component: ComponentDef) -> None:
    name = component.name
    if not isinstance(name, str) or not name:
        raise InvalidComponentError(f"component name must be a non-empty string; given {name!r}.")
    if name.startswith(SYSTEM_PREFIX):
        raise ReservedNameError(
            f"component name {name!r} is reserved: names starting with {SYSTEM_PREFIX!r} belong to "
            f"the system (__acker, __system, __tick). Rename the component.",
            component=name,
        )
    if component.kind not in KINDS:
        raise InvalidComponentError(
            f"component {name!r} has kind {component.kind!r}; it must be 'spout' or 'bolt'.",
            component=name,
        )
    what = f"{component.kind} {name!r}"
    if not component.python_class and not component.shell:
        raise InvalidComponentError(
            f"{what} has no implementation: give it a Python class (python_class) or a shell "
            f"command (shell).",
            component=name,
        )
    parallelism = component.parallelism
    if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1:
        raise InvalidParallelismError(
            f"{what} has parallelism {parallelism!r}; parallelism must be an integer of 1 or "
            f"more (par=1, par=4, or par={{'prod': 4}} with -e prod).",
            component=name,
        )
    if PARALLELISM_CONFIG_KEY in component.config:
        raise InvalidConfigError(
            f"{what} sets {PARALLELISM_CONFIG_KEY!r} in its config; the plan keeps the "
            f"parallelism there itself. Set par on the spec instead.",
            component=name,
        )
    for stream_name, stream in component.outputs.items():
        _check_output(component, stream_name, stream)
    if component.kind == SPOUT:
        if not component.outputs:
            raise MissingOutputsError(
                f"{what} declares no output stream; a spout must emit on at least one. Set "
                f"outputs = ['field', ...] on its class (or outputs=[...] on a shell spec).",
                component=name,
            )
        if component.inputs:
            first = component.inputs[0]
            raise SpoutInputsError(
                f"{what} subscribes to stream {first.stream!r} of {first.source!r}, but spouts "
                f"are sources and cannot have inputs. Make it a bolt or remove its inputs.",
                component=name,
                stream=first.stream,
            )
    if component.kind == BOLT and not component.inputs:
        raise MissingInputsError(
            f"{what} has no inputs; a bolt must subscribe to at least one stream. Pass "
            f"inputs=[some_spout] (or a dict of stream -> Grouping) to its spec.",
            component=name,
        )


def _check_output(component: ComponentDef, stream_name: str, stream: object) -> None:
    name = component.name
    if not isinstance(stream_name, str) or not stream_name:
        raise InvalidComponentError(
            f"{component.kind} {name!r} declares a stream named {stream_name!r}; stream names are "
            f"non-empty strings.",
            component=name,
        )
    if stream_name.startswith(SYSTEM_PREFIX):
        raise ReservedNameError(
            f"{component.kind} {name!r} declares stream {stream_name!r}; stream names starting "
            f"with {SYSTEM_PREFIX!r} belong to the system (__ack_ack, __tick, ...). Rename the "
            f"stream.",
            component=name,
            stream=stream_name,
        )
    if getattr(stream, "name", None) != stream_name or getattr(stream, "component", None) != name:
        raise InvalidComponentError(
            f"{component.kind} {name!r}: outputs[{stream_name!r}] is {stream!r}, which does not "
            f"describe stream {stream_name!r} of {name!r}.",
            component=name,
            stream=stream_name,
        )
    seen: set[str] = set()
    for field_name in stream.fields:  # type: ignore[attr-defined]
        if field_name in seen:
            raise DuplicateFieldError(
                f"{component.kind} {name!r} declares field {field_name!r} twice on stream "
                f"{stream_name!r}; field names in a stream must be unique. Rename one.",
                component=name,
                stream=stream_name,
                field=field_name,
            )
        seen.add(field_name)


def _check_input(
    topology: str,
    component: ComponentDef,
    subscription: InputDef,
    components: Mapping[str, ComponentDef],
) -> None:
    name, source, stream = component.name, subscription.source, subscription.stream
    where = f"bolt {name!r}"
    _check_grouping_shape(where, component, subscription)
    if source not in components:
        raise UnknownComponentError(
            f"{where} subscribes to component {source!r}, which is not in topology {topology!r} "
            f"(components: {', '.join(components)}). Fix the name in {name!r}'s inputs or add "
            f"the component.",
            component=name,
            stream=stream,
        )
    producer = components[source]
    if stream not in producer.outputs:
        raise UnknownStreamError(
            f"{where} subscribes to stream {stream!r} of {source!r}, which declares only "
            f"{sorted(producer.outputs)}. Subscribe to one of those, or declare "
            f"Stream(fields=[...], name={stream!r}) in {source!r}'s outputs.",
            component=name,
            stream=stream,
        )
    declared = producer.outputs[stream]
    for field_name in subscription.fields:
        if field_name not in declared.fields:
            raise UnknownFieldError(
                f"{where} groups stream {stream!r} of {source!r} by field {field_name!r}, which "
                f"that stream does not have (fields: {list(declared.fields)}). Use one of its "
                f"fields in Grouping.fields(...).",
                component=name,
                stream=stream,
                field=field_name,
            )
    if subscription.grouping == "direct" and not declared.direct:
        raise DirectGroupingError(
            f"{where} subscribes to stream {stream!r} of {source!r} with a direct grouping, but "
            f"that stream is not declared direct. Declare it as Stream(fields=[...], "
            f"name={stream!r}, direct=True) in {source!r}'s outputs, or use another grouping.",
            component=name,
            stream=stream,
        )


def _check_grouping_shape(where: str, component: ComponentDef, subscription: InputDef) -> None:
    grouping, stream = subscription.grouping, subscription.stream
    source = subscription.source

    def fail(problem: str) -> InvalidGroupingError:
        return InvalidGroupingError(
            f"{where} subscribes to stream {stream!r} of {source!r} {problem}",
            component=component.name,
            stream=stream,
        )

    if grouping not in GROUPINGS:
        raise fail(f"with grouping {grouping!r}, which is not one of {', '.join(GROUPINGS)}.")
    if grouping == "fields" and not subscription.fields:
        raise fail(
            "with a fields grouping that names no field; name at least one "
            "(Grouping.fields('word')), or use Grouping.GLOBAL to send everything to one task."
        )
    if grouping != "fields" and subscription.fields:
        raise fail(
            f"with a {grouping} grouping and fields {list(subscription.fields)}; only a fields "
            f"grouping takes fields. Use Grouping.fields(...) or drop the fields."
        )
    if (grouping == "custom") != bool(subscription.custom_grouping):
        raise fail(
            "with a custom grouping and no grouping class; name the class as 'module:QualName'."
            if grouping == "custom"
            else f"with a {grouping} grouping and a custom grouping class; only a custom grouping "
            f"takes one."
        )


def _check_default_stream_cycles(topology: str, components: Mapping[str, ComponentDef]) -> None:
    """Find a loop made only of default-stream edges, by depth-first search in definition order."""
    successors: dict[str, list[str]] = {name: [] for name in components}
    for component in components.values():
        for subscription in component.inputs:
            if subscription.stream == DEFAULT_STREAM:
                successors[subscription.source].append(component.name)
    visiting: set[str] = set()
    done: set[str] = set()
    for start in components:
        if start in done:
            continue
        path: list[str] = [start]
        stack = [iter(successors[start])]
        visiting.add(start)
        while stack:
            following = next(stack[-1], None)
            if following is None:
                stack.pop()
                finished = path.pop()
                visiting.discard(finished)
                done.add(finished)
            elif following in visiting:
                cycle = tuple(path[path.index(following):]) + (following,)
                raise CycleError(
                    f"topology {topology!r} has a cycle on default streams: "
                    f"{' -> '.join(cycle)}. A topology may loop back only through a named "
                    f"stream: declare Stream(fields=[...], name='feedback') on one of "
                    f"{', '.join(repr(c) for c in dict.fromkeys(cycle))} and subscribe to "
                    f"that stream instead of 'default'.",
                    cycle=cycle,
                )
            elif following not in done:
                visiting.add(following)
                path.append(following)
                stack.append(iter(successors[following]))
