"""The ``heron`` command."""
