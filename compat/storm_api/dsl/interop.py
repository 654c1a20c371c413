"""Mixing this DSL with streamparse's, in both directions.

Topology files keep ``from streamparse import Topology, Grouping, Bolt`` and add our
components (``compat.connectors.FileSpout.spec()``, a ``TwoPhaseCommitBolt``); files on
``compat.storm_api`` host real streamparse bolts (``SomeStreamparseBolt.spec(...)``). So
each DSL meets the other's objects: specs, groupings, ``spec["stream"]`` stream ids and
``Stream`` outputs.

**streamparse's DSL checking ours.** streamparse tests what it is given with
``isinstance`` against its own classes (``ComponentSpec``, ``ShellBoltSpec``,
``storm_thrift.Grouping``, ``GlobalStreamId``, ``Stream``), in code we cannot change and
must not patch: users import the real package. The only sound way through is for our
objects to *be* instances of those classes. So while streamparse is imported, every spec,
grouping, stream id and ``Stream`` this DSL makes is an instance of a *mixed class*: our
class first (all behaviour, checks, messages and reprs stay ours) with streamparse's
counterpart after it in the bases, which adds nothing but the ``isinstance`` answer.
Alternatives we rejected:

- building streamparse's own objects when streamparse is loaded (``spec()`` returning
  *their* spec class): a spec cannot know which ``Topology`` it will be put in (a spout
  has no inputs to tell), and our validation and messages would vary with what happens
  to be imported;
- converting at the boundary: the boundary is inside streamparse (``Bolt.spec``,
  ``TopologyType``), which rejects our objects before any code of ours runs;
- importing streamparse from compat to make the classes mixed once, at import: it costs
  about 0.5 s (it parses Storm's thrift IDL) in every process that imports compat,
  topology-free task processes included, and streamparse is optional for compat.

The mixed class is chosen when an object is made, from ``sys.modules``: streamparse's
DSL can only ever see our objects if streamparse is imported, and topology files import
it (``from streamparse import Topology``) before their class bodies call ``spec()``. The
``Grouping`` constants (``Grouping.SHUFFLE`` ...) are made on first access for the same
reason, not when this package is imported. Objects made *before* streamparse is
imported stay plain and streamparse refuses them; our own DSL accepts both.

**Our DSL checking theirs.** Our checks accept our classes and, when streamparse is
loaded, its counterparts (:func:`accepted`): both describe a component through the same
attributes (``name``, ``inputs``, ``outputs``, ``common``, ``component_object``...), which
is what the planner reads (``engine.common.plan.compiler``), so nothing else needs converting.
The checks name streamparse's classes rather than test attribute shapes (duck typing):
streamparse is the one other DSL, and a wrong value (a component's name where its spec
belongs, a string for a grouping) must still get this DSL's message, not pass for an
object that happens to have a ``name``.

Nothing here imports streamparse: with streamparse absent every class is plain and
every check is ours alone.

A mixed object pickles (and deep-copies) as its plain class, so a pickle never names a
class that exists only in the process that made it; unpickled where streamparse is
loaded, it is mixed again.

Not covered: streamparse's ``Topology.write()``, the thrift bytes a Nimbus takes, cannot
encode the structs inside our specs (``ComponentCommon``... are plain Python here). The
engines never use it, and our ``Topology`` has no ``write``.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["accepted", "instance_class", "streamparse_class"]

_T = TypeVar("_T")


def _attribute(module: str, path: str) -> Callable[[], Any]:
    def find() -> Any:
        value: Any = sys.modules.get(module)
        for part in path.split("."):
            value = getattr(value, part, None)
        return value

    return find


def _grouping_class() -> Any:
    # the class of streamparse's groupings (its private repr subclass of
    # storm_thrift.Grouping), found through a public constant rather than by its name
    grouping = _attribute("streamparse.dsl.stream", "Grouping.SHUFFLE")()
    return None if grouping is None else type(grouping)


#: Our role names and where streamparse keeps each counterpart. A module is looked up in
#: ``sys.modules`` only, so asking never imports streamparse.
_COUNTERPARTS: dict[str, Callable[[], Any]] = {
    "ComponentSpec": _attribute("streamparse.dsl.component", "ComponentSpec"),
    "ShellComponentSpec": _attribute("streamparse.dsl.component", "ShellComponentSpec"),
    "JavaComponentSpec": _attribute("streamparse.dsl.component", "JavaComponentSpec"),
    "ShellSpoutSpec": _attribute("streamparse.dsl.spout", "ShellSpoutSpec"),
    "JavaSpoutSpec": _attribute("streamparse.dsl.spout", "JavaSpoutSpec"),
    "ShellBoltSpec": _attribute("streamparse.dsl.bolt", "ShellBoltSpec"),
    "JavaBoltSpec": _attribute("streamparse.dsl.bolt", "JavaBoltSpec"),
    "Stream": _attribute("streamparse.dsl.stream", "Stream"),
    # what streamparse checks groupings against; every streamparse grouping is one
    "Grouping": _attribute("streamparse.thrift", "storm_thrift.Grouping"),
    # what Grouping.fields() and the constants make: streamparse's own grouping class,
    # so a streamparse grouping and ours compare equal by value
    "GroupingValue": _grouping_class,
    "GlobalStreamId": _attribute("streamparse.thrift", "storm_thrift.GlobalStreamId"),
    "NullStruct": _attribute("streamparse.thrift", "storm_thrift.NullStruct"),
}


def streamparse_class(role: str) -> type | None:
    """streamparse's class for ``role`` (a key of ``_COUNTERPARTS``), if it is loaded."""
    found = _COUNTERPARTS[role]()
    return found if isinstance(found, type) else None


def accepted(ours: type[_T], role: str) -> tuple[type[_T], ...]:
    """The classes an ``isinstance`` check of this DSL takes for ``role``: ours and, when
    streamparse is loaded, its counterpart."""
    theirs = streamparse_class(role)
    if theirs is None:
        return (ours,)
    # typed as ours: streamparse's counterpart is read through the same attributes (the
    # module docstring), so what passes the check is used as ours
    return (ours, cast("type[_T]", theirs))


#: mixed classes made so far, by (our class, streamparse's class)
_MIXED: dict[tuple[type, type], type] = {}


def instance_class(cls: type[_T]) -> type[_T]:
    """The class a new instance of ``cls`` gets: ``cls`` itself, or, while streamparse is
    loaded, ``cls`` mixed with the counterpart of its role (``cls._streamparse_role``).

    Called from the ``__new__`` of our DSL classes; a subclass (``PythonBoltSpec``, a
    user's spec class) inherits the role of its nearest base that declares one.
    """
    role = getattr(cls, "_streamparse_role", None)
    theirs = streamparse_class(role) if role else None
    if theirs is None or issubclass(cls, theirs):
        return cls
    key = (cls, theirs)
    mixed = _MIXED.get(key)
    if mixed is None:
        # setdefault: threads racing here all get the one class that went in first
        mixed = _MIXED.setdefault(
            key, types.new_class(cls.__name__, (cls, theirs), exec_body=_body(cls)))
    return mixed


def _body(plain: type) -> Callable[[dict[str, Any]], None]:
    def fill(namespace: dict[str, Any]) -> None:
        namespace["__module__"] = plain.__module__
        namespace["__qualname__"] = plain.__qualname__
        namespace["__doc__"] = plain.__doc__
        namespace["__reduce_ex__"] = _reduce_as(plain)

    return fill


def _reduce_as(plain: type) -> Callable[[Any, int], tuple[Any, ...]]:
    def __reduce_ex__(self: Any, protocol: int) -> tuple[Any, ...]:
        return (_new_instance, (plain,), dict(vars(self)))

    return __reduce_ex__


def _new_instance(plain: type) -> Any:
    """An empty instance of ``plain`` (mixed if streamparse is loaded here): pickle and
    copy then restore its ``__dict__``."""
    return object.__new__(instance_class(plain))
