"""The Topology Master reports a Stream Manager whose heartbeats stop (once, not every
check) and says when they resume: a hung Stream Manager stops its container's tuples
without any process dying, so nothing else would say so."""

from __future__ import annotations

import logging

from engine.tmanager.master import STMGR_SILENT_SECS, TopologyMaster


def master_with(beats: dict[str, float]) -> TopologyMaster:
    tm = object.__new__(TopologyMaster)  # no sockets or state: only the heartbeat book
    tm.last_heartbeat = dict(beats)
    tm.silent = set()
    return tm


def test_a_silent_stream_manager_is_reported_once_and_its_return_too(caplog):
    tm = master_with({"stmgr-1": 100.0, "stmgr-2": 100.0})
    caplog.set_level(logging.INFO, logger="heron.tmanager")
    tm._check_heartbeats(100.0 + STMGR_SILENT_SECS - 1)
    assert not caplog.records
    tm.last_heartbeat["stmgr-2"] = 100.0 + STMGR_SILENT_SECS  # stmgr-2 keeps beating
    tm._check_heartbeats(100.0 + STMGR_SILENT_SECS + 1)
    tm._check_heartbeats(100.0 + STMGR_SILENT_SECS + 5)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("stmgr-1 has sent no heartbeat for 16 s")
    tm.last_heartbeat.update({"stmgr-1": 200.0, "stmgr-2": 200.0})
    tm._check_heartbeats(201.0)
    assert caplog.records[-1].getMessage() == "stmgr-1 sends heartbeats again"
    assert tm.silent == set()
