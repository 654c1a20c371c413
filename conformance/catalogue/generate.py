"""How the catalogue's input fixtures were made: small, seeded, repeatable.

The fixtures are checked in (``fixtures/*.jsonl``, one ``{"values": [...]}`` per line)
so a case's input is visible and stable; a test checks each file still equals what its
generator here produces. Regenerate with ``python -m conformance.catalogue.generate``.
"""

from __future__ import annotations

import json
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"

VOCABULARY = [
    "apple",
    "banana",
    "cherry",
    "damson",
    "elder",
    "fig",
    "grape",
    "hazel",
    "iris",
    "juniper",
    "kale",
    "lime",
    "mango",
    "nectar",
    "olive",
    "pear",
    "quince",
    "rowan",
    "sage",
    "thyme",
]


def numbers(count: int = 120, keys: int = 7) -> list[list[Any]]:
    """``[n, "k<n % keys>"]`` for n in 0..count-1."""
    return [[n, f"k{n % keys}"] for n in range(count)]


def letters() -> list[list[Any]]:
    return [[c] for c in string.ascii_lowercase]


def words(count: int = 40, seed: int = 3) -> list[list[Any]]:
    """``[n, word]`` with words drawn from the vocabulary by a seeded generator."""
    rng = random.Random(seed)
    return [[n, rng.choice(VOCABULARY)] for n in range(count)]


def sentences(count: int = 60, seed: int = 7) -> list[list[Any]]:
    """``[sid, sentence]``: 3 to 8 vocabulary words per sentence, seeded."""
    rng = random.Random(seed)
    return [[sid, " ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(3, 8)))]
            for sid in range(count)]


#: fixture file name -> the generator of its rows
GENERATORS: dict[str, Callable[[], list[list[Any]]]] = {
    "numbers.jsonl": numbers,
    "letters.jsonl": letters,
    "words.jsonl": words,
    "sentences.jsonl": sentences,
    "empty.jsonl": list,
}


def render(rows: list[list[Any]]) -> str:
    return "".join(json.dumps({"values": row}) + "\n" for row in rows)


def main(directory: Path = FIXTURES) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, generate in GENERATORS.items():
        (directory / name).write_text(render(generate()), encoding="utf-8")
        sys.stderr.write(f"wrote {directory / name}\n")


if __name__ == "__main__":
    main()
