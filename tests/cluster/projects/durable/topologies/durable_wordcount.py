"""Durable word count for cluster tests: a ledger-backed spout into a recording sink
(fields-grouped on the word, two tasks), at-least-once."""

from durable import LedgerSpout, RecordingSink
from streamparse import Grouping, Topology


class DurableWordcount(Topology):
    config = {"topology.message.timeout.secs": 20, "topology.max.spout.pending": 200}
    ledger_spout = LedgerSpout.spec()
    sink = RecordingSink.spec(inputs={ledger_spout: Grouping.fields("word")}, par=2)
