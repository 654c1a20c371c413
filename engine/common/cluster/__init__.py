"""Clusters beyond this machine: how one is described (``~/.heron/conf/CLUSTER/``), how a
topology is packed and uploaded for its nodes, and how a node starts its container."""
