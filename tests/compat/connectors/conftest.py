"""The connectors' tests use the session's real redis-server (``redis_server`` and
``redis_url`` in tests/conftest.py)."""
