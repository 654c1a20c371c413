"""The libraries the roles and tools share (Heron's ``heron/common``): the wire
(network, serialization, the tuple codec), processes and their start-up, the topology's
plan and launch file, groupings, the multilang protocol, security, cluster settings, and
the local runner and submission loading that both the CLI and ``engine.entry`` use."""
