"""The Storm API keeps the config names users import; they are the engine's own."""

import compat.storm_api.config as api_config
import engine.config.checkpointing
import engine.config.errors
import engine.config.keys
import engine.config.reliability


def test_every_name_users_import_is_the_engines_object():
    engine_modules = (engine.config.checkpointing, engine.config.errors, engine.config.keys,
                      engine.config.reliability)
    for name in api_config.__all__:
        owners = [m for m in engine_modules if getattr(m, name, None) is getattr(api_config, name)]
        assert owners, f"compat.storm_api.config.{name} is not the engine's"


def test_a_bad_value_raised_by_the_engine_is_caught_as_the_apis_config_error():
    try:
        api_config.reliability({"topology.reliability.mode": "SOMETIMES"})
    except api_config.ConfigError as error:
        assert "topology.reliability.mode" in str(error)
    else:
        raise AssertionError("no ConfigError")
