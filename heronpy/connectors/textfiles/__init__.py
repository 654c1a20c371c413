"""Text-file sources for streamlet topologies."""
