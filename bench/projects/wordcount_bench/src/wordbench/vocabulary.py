"""A deterministic vocabulary of made-up words, built from syllables.

The benchmark needs a realistic number of distinct keys (an English-sized vocabulary,
~175k words) so fields grouping spreads the load and the counting bolts hold a
dictionary of realistic size, but it must not download anything and every process of a
run (spout instances, the storm engine, the single-process ceiling) must derive exactly
the same list. A fixed-seed RNG over syllables gives both: pronounceable words of
realistic length (about 10 characters on average), identical in every process and Python
version (``random.Random`` with an int seed and ``randrange`` are stable).
"""

from __future__ import annotations

import random
from functools import lru_cache

#: The default vocabulary size, about the number of words in a large English dictionary.
DEFAULT_SIZE = 175_000

_ONSETS = ("", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t",
           "v", "w", "z", "br", "ch", "cl", "cr", "dr", "fl", "gr", "pl", "pr", "sh", "sl",
           "st", "str", "th", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ee", "io", "oo", "ou", "y")
_CODAS = ("", "", "", "n", "r", "s", "t", "l", "m", "nd", "rt", "st", "ck", "ng")
#: syllables per word and how often each length is drawn
_LENGTHS = (1, 1, 2, 2, 2, 2, 3, 3, 3, 4)
#: the vocabulary does not depend on the run's seed: only the word sequence does
_VOCABULARY_SEED = 20_240_917


@lru_cache(maxsize=4)
def vocabulary(size: int = DEFAULT_SIZE) -> tuple[str, ...]:
    """``size`` distinct words, always the same ones in the same order."""
    if size < 1:
        raise ValueError(f"the vocabulary needs at least one word, asked for {size}")
    syllables = [o + v + c for o in _ONSETS for v in _VOWELS for c in _CODAS]
    rng = random.Random(_VOCABULARY_SEED)
    pick = rng.randrange
    seen: dict[str, None] = {}
    n_syllables = len(syllables)
    n_lengths = len(_LENGTHS)
    while len(seen) < size:
        word = "".join(syllables[pick(n_syllables)] for _ in range(_LENGTHS[pick(n_lengths)]))
        seen.setdefault(word, None)
    return tuple(seen)
