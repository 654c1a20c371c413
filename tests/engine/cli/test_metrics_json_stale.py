"""``heron metrics --json`` flags each instance's figures ``stale`` as the table counts
them (older than STALE_AFTER_SECS by their ``__report-age``; issue 44)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from engine.tools.cli import metrics_command
from engine.tools.cli.main import main

ANSWER = {
    ("count", "container_1_count_1"): {"__execute-count": "90", "__report-age": "1"},
    ("count", "container_2_count_2"): {"__execute-count": "40", "__report-age": "17"},
    ("split", "container_1_split_3"): {"__emit-count": "300", "__report-age": "5"},
    ("__tmanager", "tmanager"): {"__checkpoints-completed": "3"},
}


def test_json_has_a_stale_flag_per_instance(monkeypatch):
    monkeypatch.setattr(metrics_command, "fetch", lambda *_args, **_kw: dict(ANSWER))
    result = CliRunner().invoke(main, ["metrics", "wordcount", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output)
    assert shown["count/container_1_count_1"]["stale"] is False
    assert shown["count/container_2_count_2"]["stale"] is True
    assert shown["split/container_1_split_3"]["stale"] is False  # 5 s is not yet stale
    assert shown["count/container_2_count_2"]["__report-age"] == "17"  # kept as it was
    assert "stale" not in shown["__tmanager/tmanager"]  # no age said: no flag
