"""The Health Manager scales a stateful component (real processes, `heron submit local`):
the keyed word count, effectively-once, whose counting bolt keeps its counts in keyed
state (``state.keyed()``) and cannot keep up at parallelism 1, is scaled up because of
backpressure to 3 tasks or more, its counts moving with their words; once the finite
corpus is drained, the (word, count) records its two-phase-commit sink committed are
every running count of every word exactly once: nothing lost, nothing counted twice.

Topology: tests/e2e/heron/projects/stateful/topologies/keyed_autoscale.py. Settings of
the Health Manager's own end-to-end test (interval 2 s, window 10 s, wait 15 s, small
watermarks); the bolt sleeps 5 ms per word (about 200/s per task) and the spout offers
the corpus at 500/s, so the Health Manager goes 1 -> 2 -> 3 or 4 (capped at 4 here, so
the run stays short; 3 tasks at about 200/s each keep up with 500/s).
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401
from tests.engine.healthmgr.e2e import actions, health, kill_and_wait, of_type, parallelism

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from stateful_autoscale_parts import corpus_counts  # noqa: E402

NAME = "keyed_autoscale"
#: the corpus: long enough that the spout still offers more than 2 tasks can count when
#: the second action comes (about 40 s in), short enough to drain in a minute or so
WORDS = 20_000
RATE = 500
#: the test's heron.healthmgr.max.parallelism (the topology's own is 6)
SCALING_MAX = 4


def records(out: Path) -> collections.Counter:
    """The sink's committed (word, count) records, with their multiplicity."""
    return collections.Counter(tuple(json.loads(line)) for line in read_committed(out))


def test_the_health_manager_scales_a_keyed_counting_bolt_and_every_count_is_exact(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    began = time.monotonic()
    out, sink, rate_file = tmp_path / "out", tmp_path / "sink", tmp_path / "rate"
    rate_file.write_text(str(RATE))
    wanted = collections.Counter((word, k) for word, total in corpus_counts(WORDS).items()
                                 for k in range(1, total + 1))
    submitted = heron("submit", "local", str(PROJECT), "-n", NAME,
                      "-o", f"e2e.words={WORDS}", "-o", f"e2e.out={out}",
                      "-o", f"e2e.rate_file={rate_file}",
                      "-o", f"heron.connectors.file.sink.dir={sink}",
                      "-o", f"heron.healthmgr.max.parallelism={SCALING_MAX}")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: parallelism(state, "count", NAME) >= 3, timeout=120), \
                f"never scaled to 3: {health(NAME)[-10:]}"
            committed_then = sum(records(sink).values())
            assert committed_then < WORDS, "the corpus was drained before the scaling: " \
                "make it longer"
            records_ = health(NAME)
            kinds = {(r["type"], r.get("kind")) for r in records_}
            assert {("symptom", "back_pressure"), ("diagnosis", "under_provisioning"),
                    ("action", "scale")} <= kinds, records_
            scaled = actions(records_, "under_provisioning", "scale")
            first = scaled[0]
            assert first["component"] == "count" and first["current"] == 1, first
            assert first["status"] == "applied" and first["target"] > 1, first
            assert all(a["status"] == "applied" for a in scaled), scaled
            assert max(a["target"] for a in scaled) >= 3, scaled
            assert max(a["target"] for a in scaled) <= SCALING_MAX, scaled
            # the stateful guard let it through: no note that it refused the scaling
            refused = [n for n in of_type(records_, "note") if "not scaled" in n["message"]]
            assert not refused, refused
            stored = state.get("packingplans", NAME)
            assert sum(1 for c in stored.container_plans for i in c.instance_plans
                       if i.component_name == "count") >= 3

            assert wait_until(lambda: sum(records(sink).values()) >= WORDS, timeout=120), \
                f"the corpus was never drained: {sum(records(sink).values())} of {WORDS}"
            got = records(sink)
            missing, repeated = wanted - got, got - wanted
            assert got == wanted, (f"{sum(missing.values())} counts missing (e.g. "
                                   f"{list(missing)[:5]}), {sum(repeated.values())} extra "
                                   f"(e.g. {list(repeated)[:5]})")
        finally:
            killed = kill_and_wait(NAME, live_processes, timeout=30)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=30), \
        [p.cmdline() for p in live_processes()]
    print(f"scaled {[(a['current'], a['target']) for a in scaled]}; {WORDS} words counted "
          f"exactly once in {time.monotonic() - began:.0f} s")
