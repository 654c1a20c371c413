"""For `heron update`: ids -> (word, 1) -> per-word ledger, at-least-once."""

from e2e_heron_acking import LedgerSpout, WordLedger, Words

from compat.storm_api import Grouping, Topology


class Update(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 1,
              "topology.message.timeout.secs": 5}
    source = LedgerSpout.spec(par=1)
    words = Words.spec(inputs={source: Grouping.SHUFFLE}, par=2)
    sink = WordLedger.spec(inputs={words: Grouping.fields("word")}, par=2)
