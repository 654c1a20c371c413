"""Topologies modelled on Heron's examples/src/python, written against heronpy's API as
Heron's are; spouts are finite (ROUNDS rounds of WORDS) so runs have known results."""
