"""python -m examples.summingbird_wordcount [--platform memory|batch|streaming]
[--engine storm|heron] [--input FILE.jsonl]"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from compat.summingbird import (
    InMemoryStore,
    JsonLinesSource,
    MemoryPlatform,
    Options,
    SQLiteStore,
    SummerParallelism,
    SummingbirdError,
    source,
)

from .job import word_count

SAMPLE = Path(__file__).parent / "data" / "lines.jsonl"


@click.command()
@click.option("--platform", type=click.Choice(["memory", "batch", "streaming"]), default="memory",
              show_default=True, help="memory: the in-process oracle; batch: PySpark; "
                                      "streaming: a topology on --engine.")
@click.option("--engine", type=click.Choice(["storm", "heron"]), default="storm",
              show_default=True, help="Engine for --platform streaming.")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="Spark master for --platform batch.")
@click.option("--input", "input_path", type=click.Path(exists=True, dir_okay=False),
              default=str(SAMPLE), show_default=True,
              help="JSON-lines file, one string (a line of text) per line.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
              help="SQLite file to count into (counts add up across runs); default: memory.")
@click.option("--parallelism", type=int, default=None,
              help="Summer parallelism, given to the job's 'word-counts' name.")
@click.option("--top", type=int, default=10, show_default=True, help="How many words to print.")
@click.option("--json", "as_json", is_flag=True, help="Print every count as JSON.")
def main(platform: str, engine: str, spark_master: str, input_path: str,
         store_path: str | None, parallelism: int | None, top: int, as_json: bool) -> None:
    """Count words with a Summingbird job on the memory, batch or streaming platform."""
    store = SQLiteStore(store_path) if store_path else InMemoryStore()
    options = {"word-counts": Options(SummerParallelism(parallelism))} if parallelism else {}
    job = word_count(source(JsonLinesSource(input_path)), store)
    try:
        if platform == "memory":
            MemoryPlatform(options).execute(job)
        elif platform == "streaming":
            from compat.summingbird.platforms.streaming import StreamingPlatform

            StreamingPlatform(options, engine=engine).execute(job)
            platform = f"streaming on {engine}"
        else:
            from compat.summingbird.platforms.batch import BatchPlatform

            BatchPlatform(options, spark_master=spark_master).execute(job)
    except SummingbirdError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    counts = sorted(store.contents().items(), key=lambda kv: (-kv[1], kv[0]))
    if as_json:
        click.echo(json.dumps(dict(counts), sort_keys=True))
        return
    click.echo(f"{len(counts)} distinct words, {sum(c for _, c in counts)} in all ({platform})")
    for word, count in counts[:top]:
        click.echo(f"{count:>6}  {word}")


if __name__ == "__main__":
    main()
