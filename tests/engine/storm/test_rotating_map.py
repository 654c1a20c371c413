from engine.storm.rotating_map import RotatingMap


def test_entries_expire_after_buckets_minus_one_to_buckets_rotations():
    m = RotatingMap(3)
    m.put("a", 1)
    assert m.rotate() == {}
    assert m.rotate() == {}
    assert m.rotate() == {"a": 1}
    assert "a" not in m and len(m) == 0


def test_put_refreshes_and_pop_removes():
    m = RotatingMap(2)
    m.put("a", 1)
    m.rotate()
    m.put("a", 2)  # refreshed into the newest bucket
    assert m.rotate() == {}
    assert m.get("a") == 2
    assert m.pop("a") == 2 and m.pop("a") is None
