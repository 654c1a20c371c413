import pytest

from engine.config.checkpointing import Checkpointing, checkpointing
from engine.config.errors import ConfigError
from engine.config.keys import (
    ALIGNMENT_BUFFER_KEY,
    CHECKPOINT_INTERVAL_KEY,
    RETENTION_KEY,
    SAVEPOINTS_KEY,
    START_CLEAN_KEY,
    STORAGE_CLASS_KEY,
    STORAGE_ROOT_KEY,
)
from engine.config.reliability import tick_frequency


def test_an_empty_config_checkpoints_every_five_seconds_into_localfs():
    assert checkpointing({}) == Checkpointing()


def test_herons_keys_are_read_and_the_storage_class_accepts_herons_name():
    got = checkpointing({CHECKPOINT_INTERVAL_KEY: 2, START_CLEAN_KEY: "True",
                         ALIGNMENT_BUFFER_KEY: 1, RETENTION_KEY: 0.5,
                         STORAGE_CLASS_KEY: "org.apache.heron.statefulstorage.localfs."
                                            "LocalFileSystemStorage",
                         STORAGE_ROOT_KEY: "/tmp/ck", SAVEPOINTS_KEY: ""})
    assert got == Checkpointing(interval_secs=2.0, start_clean=True, buffer_bytes=1024 * 1024,
                                retained=1, root="/tmp/ck", savepoints=None)


@pytest.mark.parametrize("conf,key", [
    ({CHECKPOINT_INTERVAL_KEY: 0}, CHECKPOINT_INTERVAL_KEY),
    ({START_CLEAN_KEY: "maybe"}, START_CLEAN_KEY),
    ({STORAGE_CLASS_KEY: "hdfs"}, STORAGE_CLASS_KEY),
    ({STORAGE_ROOT_KEY: 3}, STORAGE_ROOT_KEY),
    ({SAVEPOINTS_KEY: True}, SAVEPOINTS_KEY),
])
def test_bad_checkpoint_values_name_the_key_in_one_line(conf, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as raised:
        checkpointing(conf)
    assert "\n" not in str(raised.value)


def test_tick_frequency_is_none_unless_set_positive():
    assert tick_frequency({}) is None
    assert tick_frequency({"topology.tick.tuple.freq.secs": 2}) == 2
    with pytest.raises(ConfigError, match=r"topology\.tick\.tuple\.freq\.secs"):
        tick_frequency({"topology.tick.tuple.freq.secs": True})
