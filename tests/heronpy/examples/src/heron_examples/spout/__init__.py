"""Example spouts."""
from heron_examples.spout.multi_stream_spout import MultiStreamSpout
from heron_examples.spout.stateful_word_spout import StatefulWordSpout
from heron_examples.spout.word_spout import WordSpout

__all__ = ["MultiStreamSpout", "StatefulWordSpout", "WordSpout"]
