"""Mock sources for streamlet topologies."""
