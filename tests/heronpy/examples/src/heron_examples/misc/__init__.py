"""Example task hook."""
