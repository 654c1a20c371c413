"""The job: enrich page views with the viewer's country, then aggregate per (country, page).

``PageStats`` is a custom value type with its own monoid, ``PageStatsMonoid``: views and
time add up, the longest view is a max, and distinct viewers are a HyperLogLog sketch
(a library monoid used inside ours). Every part is commutative, so the monoid declares
``commutative = True`` and the batch platform combines map-side with ``reduceByKey``;
``tests/summingbird/test_examples.py`` checks its laws.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from compat.summingbird import Producer
from compat.summingbird.monoids import HLLSketch, HyperLogLog, Monoid

USERS_HLL = HyperLogLog(bits=10)


class PageStats(NamedTuple):
    """What we keep per (country, page)."""

    views: int
    total_ms: int
    longest_ms: int
    viewers: HLLSketch

    @property
    def mean_ms(self) -> float:
        return self.total_ms / self.views if self.views else 0.0

    @property
    def distinct_viewers(self) -> int:
        return round(self.viewers.estimate())


class PageStatsMonoid(Monoid[PageStats]):
    """Field-wise: sum, sum, max, sketch union."""

    commutative = True

    @property
    def zero(self) -> PageStats:
        return PageStats(0, 0, 0, USERS_HLL.zero)

    def plus(self, left: PageStats, right: PageStats) -> PageStats:
        return PageStats(left.views + right.views, left.total_ms + right.total_ms,
                         max(left.longest_ms, right.longest_ms),
                         USERS_HLL.plus(left.viewers, right.viewers))

    @staticmethod
    def of(user: str, ms: int) -> PageStats:
        """One view of ``ms`` milliseconds by ``user``."""
        return PageStats(1, ms, ms, USERS_HLL.create(user))


PAGE_STATS = PageStatsMonoid()


def by_user(view: tuple[str, str, int]) -> tuple[str, tuple[str, int]]:
    """A view ``(user, page, ms)`` keyed by user, ready for the join."""
    user, page, ms = view
    return (user, (page, ms))


def enriched(joined: tuple[str, tuple[tuple[str, int], Any]]) -> dict[str, Any]:
    """The joined view as a record for the sink; unknown users get country "??"."""
    user, ((page, ms), profile) = joined
    country = profile["country"] if profile else "??"
    return {"user": user, "page": page, "ms": ms, "country": country}


def to_stats(record: dict[str, Any]) -> tuple[tuple[str, str], PageStats]:
    return ((record["country"], record["page"]), PageStatsMonoid.of(record["user"], record["ms"]))


def page_views(views: Producer, users: Any, stats_store: Any, enriched_sink: Any) -> Producer:
    """Write every enriched view to ``enriched_sink`` and aggregate into ``stats_store``."""
    records = views.map(by_user).left_join(users).map(enriched).name("enrich")
    return (records.write(enriched_sink)
            .also(records.map(to_stats).sum_by_key(stats_store, PAGE_STATS).name("page-stats")))
