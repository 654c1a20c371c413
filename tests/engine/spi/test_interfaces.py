"""Every plug-in implements its engine.spi interface, and the config value picks it."""

from __future__ import annotations

import logging
import threading

import pytest

from engine.common.launch import LaunchSpec, Submission
from engine.packing import (
    PACKINGS,
    FirstFitDecreasingPacking,
    PackingError,
    RoundRobinPacking,
    packing_for,
)
from engine.scheduler.kubernetes import KubernetesScheduler
from engine.scheduler.local import LocalScheduler
from engine.scheduler.registry import SCHEDULERS, runs_as_service, scheduler_for
from engine.scheduler.slurm import SlurmScheduler
from engine.spi import KillOnce, Packing, Scheduler, ServiceScheduler, StateManager, Uploader
from engine.statemgr import open_state_manager
from engine.uploader import UPLOADERS, HttpUploader, LocalFsUploader


def launch_spec(tmp_path, scheduler: str = "local") -> LaunchSpec:
    return LaunchSpec(topology_name="wc", topology_id="wc-1", working_dir=str(tmp_path),
                      submission=Submission(project=str(tmp_path), name="wc"),
                      scheduler=scheduler, package_url="file:///p.tar.gz", package_sha256="0" * 64)


def test_every_scheduler_implements_the_scheduler_interface(tmp_path):
    schedulers = [LocalScheduler(launch_spec(tmp_path), state=object()),
                  SlurmScheduler(launch_spec(tmp_path, "slurm"), state=object()),
                  KubernetesScheduler({"heron.topology.name": "wc"})]
    for scheduler in schedulers:
        assert isinstance(scheduler, Scheduler), type(scheduler).__name__
    assert all(isinstance(s, ServiceScheduler) for s in schedulers[:2])
    assert set(SCHEDULERS) == {"local", "slurm", "kubernetes"}


@pytest.mark.parametrize("value, plugin", [("local", LocalScheduler), ("slurm", SlurmScheduler)])
def test_scheduler_for_returns_the_plugin_the_launch_spec_names(tmp_path, value, plugin):
    scheduler = scheduler_for(launch_spec(tmp_path, value), object())
    assert type(scheduler) is plugin
    assert runs_as_service(value)


def test_scheduler_for_refuses_a_scheduler_that_runs_in_the_cli(tmp_path):
    assert not runs_as_service("kubernetes")
    with pytest.raises(ValueError, match="kubernetes scheduler does not run as a service"):
        scheduler_for(launch_spec(tmp_path, "kubernetes"), object())


@pytest.mark.parametrize("value, plugin", [(None, RoundRobinPacking),
                                           ("round-robin", RoundRobinPacking),
                                           ("first_fit_decreasing", FirstFitDecreasingPacking)])
def test_packing_for_returns_the_plugin_the_config_names(value, plugin):
    packing = packing_for({"topology.packing.algorithm": value})
    assert type(packing) is plugin and isinstance(packing, Packing)
    assert all(isinstance(cls(), Packing) for cls in PACKINGS.values())


def test_an_unknown_packing_algorithm_is_refused_naming_the_choices():
    with pytest.raises(PackingError, match="first_fit_decreasing, round_robin"):
        packing_for({"topology.packing.algorithm": "best_fit"})


def test_every_uploader_implements_the_uploader_interface(tmp_path):
    assert UPLOADERS == {"localfs": LocalFsUploader, "http": HttpUploader}
    assert isinstance(LocalFsUploader(tmp_path), Uploader)
    assert isinstance(HttpUploader("http://127.0.0.1:1/packages"), Uploader)


def test_the_local_state_manager_implements_the_state_manager_interface(tmp_path):
    with open_state_manager("local", root=tmp_path / "state") as state:
        assert isinstance(state, StateManager)


class _Recording(KillOnce):
    def __init__(self, tmp_path) -> None:
        self.spec = launch_spec(tmp_path)
        self.calls: list[str] = []
        self.state = self
        self._lock = threading.Lock()
        self._killed = False
        self._kill_log = logging.getLogger("test")

    def stop(self) -> None:
        self.calls.append("stop")

    def clean(self, name: str) -> None:
        self.calls.append(f"clean {name}")

    def _after_kill(self) -> None:
        self.calls.append("after")


def test_kill_stops_cleans_and_releases_once_whoever_calls_it(tmp_path):
    scheduler = _Recording(tmp_path)
    scheduler.kill()
    scheduler.kill()
    assert scheduler.calls == ["stop", "clean wc", "after"]
