"""python -m examples.summingbird_pageviews [--platform memory|batch] [--service memory|sqlite]"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click

from compat.summingbird import (
    InMemoryService,
    InMemoryStore,
    JsonLinesSink,
    JsonLinesSource,
    MemoryPlatform,
    Options,
    SourceParallelism,
    SQLiteStore,
    SummerParallelism,
    SummingbirdError,
    source,
)

from .job import page_views

DATA = Path(__file__).parent / "data"


def load_users(path: str) -> dict[str, dict[str, str]]:
    """``{user: profile}`` from a JSON-lines file of ``{"user": ..., "country": ...}``."""
    users = {}
    for record in JsonLinesSource(path).read():
        users[record["user"]] = {"country": record["country"]}
    return users


@click.command()
@click.option("--platform", type=click.Choice(["memory", "batch"]), default="memory",
              show_default=True, help="memory: the in-process oracle; batch: PySpark.")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="Spark master for --platform batch.")
@click.option("--views", "views_path", type=click.Path(exists=True, dir_okay=False),
              default=str(DATA / "views.jsonl"), show_default=True,
              help='JSON lines: ["user", "page", milliseconds].')
@click.option("--users", "users_path", type=click.Path(exists=True, dir_okay=False),
              default=str(DATA / "users.jsonl"), show_default=True,
              help='JSON lines: {"user": ..., "country": ...}.')
@click.option("--service", type=click.Choice(["memory", "sqlite"]), default="sqlite",
              show_default=True, help="Where the user lookups are served from.")
@click.option("--enriched-out", type=click.Path(dir_okay=False), default=None,
              help="JSON-lines file for the enriched views (default: a temporary file).")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON.")
def main(platform: str, spark_master: str, views_path: str, users_path: str, service: str,
         enriched_out: str | None, as_json: bool) -> None:
    """Views, mean and longest time, and distinct viewers per (country, page)."""
    with tempfile.TemporaryDirectory(prefix="sb-pageviews-") as tmp:
        users = load_users(users_path)
        if service == "sqlite":
            user_table = SQLiteStore(Path(tmp) / "users.db", table="users")
            user_table.put_all(users)
            lookup = user_table.as_service()
        else:
            lookup = InMemoryService(users)
        stats = InMemoryStore()
        sink = JsonLinesSink(enriched_out or Path(tmp) / "enriched.jsonl")
        job = page_views(source(JsonLinesSource(views_path)), lookup, stats, sink)
        # Options by name, Summingbird's way: they apply to the named node and upstream.
        options = {"page-stats": Options(SummerParallelism(2)), "DEFAULT": SourceParallelism(2)}
        try:
            if platform == "memory":
                MemoryPlatform(options).execute(job)
            else:
                from compat.summingbird.platforms.batch import BatchPlatform

                BatchPlatform(options, spark_master=spark_master).execute(job)
        except SummingbirdError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        written = len(sink.read())
        sink.close()
    rows = sorted(stats.contents().items())
    if as_json:
        click.echo(json.dumps([{"country": c, "page": p, "views": s.views,
                                "mean_ms": round(s.mean_ms, 3), "longest_ms": s.longest_ms,
                                "distinct_viewers": s.distinct_viewers}
                               for (c, p), s in rows]))
        return
    click.echo(f"{written} enriched views written ({platform}, {service} user service)")
    click.echo(f"{'country':<8} {'page':<12} {'views':>5} {'mean ms':>8} {'max ms':>7} "
               f"{'viewers':>7}")
    for (country, page), s in rows:
        click.echo(f"{country:<8} {page:<12} {s.views:>5} {s.mean_ms:>8.1f} {s.longest_ms:>7} "
                   f"{s.distinct_viewers:>7}")


if __name__ == "__main__":
    main()
