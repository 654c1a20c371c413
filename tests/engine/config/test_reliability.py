import pytest

from engine.config.errors import ConfigError
from engine.config.keys import with_defaults
from engine.config.reliability import reliability


def test_storm_defaults_mean_acking_on_with_one_acker_and_30s_timeout():
    r = reliability(with_defaults({}))
    assert r.ackers == 1 and r.acking
    assert r.message_timeout_secs == 30
    assert r.max_spout_pending is None


def test_zero_ackers_is_at_most_once():
    assert not reliability({"topology.acker.executors": 0}).acking


def test_heron_reliability_mode_wins_over_storm_ackers():
    assert reliability({"topology.acker.executors": 2,
                        "topology.reliability.mode": "ATMOST_ONCE"}).ackers == 0
    assert reliability({"topology.acker.executors": 0,
                        "topology.reliability.mode": "ATLEAST_ONCE"}).ackers == 1


@pytest.mark.parametrize("conf,key", [
    ({"topology.reliability.mode": "SOMETIMES"}, "topology.reliability.mode"),
    ({"topology.message.timeout.secs": 0}, "topology.message.timeout.secs"),
    ({"topology.acker.executors": "two"}, "topology.acker.executors"),
])
def test_bad_values_name_the_key(conf, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        reliability(conf)
