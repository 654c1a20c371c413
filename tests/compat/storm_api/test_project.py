import json

import pytest

from compat.storm_api.project import ProjectError, load_project, parse_cli_options, resolve_options


def make_project(tmp_path, config=None, topologies=("wordcount",)):
    (tmp_path / "topologies").mkdir()
    for name in topologies:
        (tmp_path / "topologies" / f"{name}.py").write_text("")
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return load_project(tmp_path)


def test_options_merge_env_then_topology_config_then_command_line():
    env = {"options": {"a": 1, "b": 1, "c": 1}}
    merged = resolve_options(env, {"b": 2, "c": 2}, {"c": 3})
    assert (merged["a"], merged["b"], merged["c"]) == (1, 2, 3)


def test_sparse_run_defaults_one_worker_one_acker_unless_zero_ackers():
    assert resolve_options({}, {}, {})["topology.acker.executors"] == 1
    assert resolve_options({}, {}, {}, ackers=0)["topology.acker.executors"] == 0
    assert resolve_options({}, {}, {})["topology.workers"] == 1


def test_debug_forces_debug_log_level_and_env_log_maps_to_pystorm_keys():
    merged = resolve_options({"log": {"path": "/x", "level": "warn"}}, {}, {}, debug=True)
    assert merged["topology.debug"] is True
    assert merged["pystorm.log.level"] == "debug"
    assert merged["pystorm.log.path"] == "/x"


def test_cli_option_values_are_yaml_parsed():
    assert parse_cli_options(["a=1", "b=true", "c=x y", "d=[1, 2]"]) == {
        "a": 1, "b": True, "c": "x y", "d": [1, 2]}
    with pytest.raises(ProjectError, match="KEY=VALUE"):
        parse_cli_options(["novalue"])


def test_unknown_topology_name_lists_available(tmp_path):
    project = make_project(tmp_path, topologies=("one", "two"))
    with pytest.raises(ProjectError, match="unknown topology 'three'.*one, two"):
        project.topology_file("three")
    with pytest.raises(ProjectError, match="-n NAME"):
        project.topology_file(None)


def test_unknown_environment_names_the_choices(tmp_path):
    project = make_project(tmp_path, {"envs": {"prod": {}, "beta": {}}})
    with pytest.raises(ProjectError, match="unknown environment 'dev'.*prod, beta"):
        project.environment("dev")
    assert project.environment(None)[0] == "prod"


def test_invalid_config_json_names_file_and_line(tmp_path):
    (tmp_path / "config.json").write_text('{\n  "envs": {,}\n}')
    with pytest.raises(ProjectError, match=r"config.json:2:\d+: invalid JSON"):
        load_project(tmp_path)


def test_heron_yaml_wins_over_config_json_and_says_so(tmp_path):
    (tmp_path / "config.json").write_text('{"envs": {"prod": {}}}')
    (tmp_path / "heron.yaml").write_text("envs:\n  dev:\n    options:\n      x: 1\n")
    project = load_project(tmp_path)
    assert project.environment(None) == ("dev", {"options": {"x": 1}})
    assert any("heron.yaml" in n for n in project.notes)
