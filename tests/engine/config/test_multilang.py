"""The config keys the bridge reads, with Storm's defaults."""
from __future__ import annotations

import pytest

from engine.config.multilang import shellbolt_max_pending, subprocess_timeout


def test_subprocess_timeout_prefers_the_topology_key():
    assert subprocess_timeout({"topology.subprocess.timeout.secs": 2,
                               "supervisor.worker.timeout.secs": 9}) == 2.0


def test_subprocess_timeout_falls_back_to_the_worker_timeout_then_30():
    assert subprocess_timeout({"supervisor.worker.timeout.secs": 9}) == 9.0
    assert subprocess_timeout({"topology.subprocess.timeout.secs": None}) == 30.0
    assert subprocess_timeout({}) == 30.0


def test_shellbolt_max_pending_defaults_to_100():
    assert shellbolt_max_pending({}) == 100
    assert shellbolt_max_pending({"topology.shellbolt.max.pending": 5}) == 5


@pytest.mark.parametrize("conf", [{"topology.subprocess.timeout.secs": 0},
                                  {"topology.subprocess.timeout.secs": "soon"},
                                  {"topology.shellbolt.max.pending": 1.5},
                                  {"topology.shellbolt.max.pending": True}])
def test_bad_values_name_the_key(conf):
    with pytest.raises(ValueError, match=next(iter(conf))):
        subprocess_timeout(conf) if "timeout" in next(iter(conf)) else shellbolt_max_pending(conf)
