"""The multi-lang path on the storm engine: same counts as in-process, shell components in
another language, a crashing subprocess restarted."""

from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

from compat.storm_api import ShellBolt, Spout, Topology
from engine.common.plan.compiler import compile_topology
from engine.common.submission import load_topology
from engine.storm import LocalCluster, OutputCapture

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(120)


def test_multilang_wordcount_equals_in_process_counts(tmp_path, isolated_imports):
    n = 2_000
    loaded = load_topology(EXAMPLE, cli_options={"wordcount.seed": 9, "wordcount.max_words": n})
    cluster = LocalCluster(loaded.compiled, multilang=True, shell_cwd=EXAMPLE / "src",
                           log_dir=tmp_path / "logs")
    done = lambda stats: stats["count_bolt"].acked == n  # noqa: E731
    result = cluster.run(time_limit=90, until=done)
    assert result.reason == "finished"
    cap = result.capture.streams[("count_bolt", "default")]
    sys.path.insert(0, str(EXAMPLE / "src"))
    from spouts.words import generate_words

    assert {k[0]: v for k, v in cap.latest.items()} == collections.Counter(generate_words(9, n))
    # the components really ran as subprocesses: their pids are in the task logs
    assert (
        "Launched subprocess with pid"
        in (tmp_path / "logs" / "wordcount_count_bolt_2.log").read_text()
    )


BASH_UPPER = r"""
read_msg() { msg=""; while IFS= read -r line; do [ "$line" = "end" ] && break; msg="$msg$line"; done; }
read_msg
pid=$$; dir=$(printf '%s' "$msg" | sed -n 's/.*"pidDir": *"\([^"]*\)".*/\1/p'); touch "$dir/$pid"
printf '{"pid": %s}\nend\n' "$pid"
while true; do
  read_msg
  [ -z "$msg" ] && exit 0
  id=$(printf '%s' "$msg" | sed -n 's/.*"id": *"\([^"]*\)".*/\1/p')
  case "$msg" in
    *__heartbeat*) printf '{"command": "sync"}\nend\n' ;;
    *) word=$(printf '%s' "$msg" | sed -n 's/.*"tuple": *\["\([^"]*\)".*/\1/p' | tr a-z A-Z)
       printf '{"command": "emit", "anchors": ["%s"], "tuple": ["%s"], "need_task_ids": false}\nend\n' "$id" "$word"
       printf '{"command": "ack", "id": "%s"}\nend\n' "$id" ;;
  esac
done
"""  # noqa: E501


class Words(Spout):
    outputs = ["word"]

    def initialize(self, conf, ctx):
        self.words = ["dog", "cat", "owl"] * 5

    def next_tuple(self):
        if self.words:
            self.emit([self.words.pop()])

    def is_exhausted(self):
        return not self.words


def test_a_bash_shell_bolt_speaks_the_protocol(tmp_path):
    (tmp_path / "upper.sh").write_text(BASH_UPPER)

    class T(Topology):
        words = Words.spec()
        upper = ShellBolt.spec(command="bash", script="upper.sh", inputs=[words],
                               outputs=["word"])

    capture = OutputCapture(keep_all=True)
    with LocalCluster(compile_topology(T), capture=capture, shell_cwd=tmp_path,
                      log_dir=tmp_path / "logs") as cluster:
        result = cluster.run(time_limit=60)
    assert result.reason == "finished"
    out = collections.Counter(v[0] for v in capture.streams[("upper", "default")].tuples)
    assert out == {"DOG": 5, "CAT": 5, "OWL": 5}


def test_a_crashing_subprocess_is_reported_and_restarted(tmp_path):
    (tmp_path / "crash.sh").write_text(BASH_UPPER.replace(
        "    *) word=", '    *"owl"*) echo "owl is fatal" >&2; exit 3 ;;\n    *) word='))

    class T(Topology):
        words = Words.spec()
        upper = ShellBolt.spec(command="bash", script="crash.sh", inputs=[words],
                               outputs=["word"])

    failures = []
    capture = OutputCapture(keep_all=True)
    with LocalCluster(compile_topology(T), capture=capture, shell_cwd=tmp_path,
                      log_dir=tmp_path / "logs", on_task_failure=failures.append) as cluster:
        cluster.run(time_limit=8, until=lambda s: s["words"].emitted == 15)
    assert failures and "exited with code 3" in failures[0]
    assert cluster.snapshot()["upper"].restarts >= 1


def test_tuples_lost_with_a_crashed_subprocess_time_out_and_are_replayed(tmp_path):
    # crashes on the first "owl" it ever sees (a marker file survives the restart)
    (tmp_path / "crash_once.sh").write_text(
        BASH_UPPER.replace(
            "    *) word=",
            '    *"owl"*) if [ ! -e crashed ]; then touch crashed; exit 3; fi\n'
            '       printf \'{"command": "emit", "anchors": ["%s"], '
            '"tuple": ["OWL"]}\\nend\\n\' "$id"\n'
            '       read -r ids; read -r end_line\n'
            '       printf \'{"command": "ack", "id": "%s"}\\nend\\n\' "$id" ;;\n'
            "    *) word=",
        )
    )

    from tests.engine.storm.engine_topologies import TrackedNumberSpout

    class OwlIds(TrackedNumberSpout):
        outputs = ["word"]

        def next_tuple(self):
            if self.i < self.limit:
                self.emit([["dog", "cat", "owl"][self.i % 3]], tup_id=self.i)
                self.i += 1

    class T(Topology):
        words = OwlIds.spec()
        upper = ShellBolt.spec(command="bash", script="crash_once.sh", inputs=[words],
                               outputs=["word"])

    failures = []
    capture = OutputCapture(keep_all=True)
    compiled = compile_topology(T, config={"test.limit": 12, "topology.message.timeout.secs": 1})
    with LocalCluster(compiled, capture=capture, shell_cwd=tmp_path, log_dir=tmp_path / "logs",
                      on_task_failure=failures.append) as cluster:
        result = cluster.run(time_limit=60)
    assert result.reason == "finished"
    assert failures and "exited with code 3" in failures[0]
    assert result.components["words"].acked == 12
    assert result.components["words"].failed >= 1
    out = collections.Counter(v[0] for v in capture.streams[("upper", "default")].tuples)
    assert out["OWL"] >= 4 and out["DOG"] >= 4 and out["CAT"] >= 4
