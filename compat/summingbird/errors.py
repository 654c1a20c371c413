"""The exceptions of the Summingbird API, one family per stage of a job's life.

A job goes wrong in one of three places, and the person reading the error needs to know
which: while it is written (a keyed operation on a stream that is not keyed, a store
that cannot merge), while it is planned for a platform (a function that cannot travel to
the workers, an option given to a name the job does not have), or while it runs (an
element that breaks a contract only the data can reveal). Every message names the node
(its operation, id and the file:line where it was written) and says what to do.
"""

from __future__ import annotations


class SummingbirdError(Exception):
    """Base of every error raised by ``compat.summingbird``."""


class JobDefinitionError(SummingbirdError, TypeError):
    """The job, as written, cannot be right on any platform (raised where it is written).

    It also derives from ``TypeError`` because most of these are what a static type
    checker would catch in Summingbird's Scala: a keyed method on a non-pair producer,
    a store that is not mergeable.
    """


class PlanningError(SummingbirdError):
    """The job cannot be planned for a platform: nothing has run yet."""


class UnpicklableFunctionError(PlanningError):
    """A node's function (or monoid, or service) cannot be shipped with the plan."""


class JobRuntimeError(SummingbirdError):
    """An element broke a contract while the job ran (e.g. a keyed node got a non-pair)."""
