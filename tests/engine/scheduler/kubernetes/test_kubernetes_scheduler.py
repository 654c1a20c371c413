"""KubernetesScheduler makes exactly the API calls of Heron's Kubernetes scheduler: the
expected call lists below are written by hand from the issue, not recorded."""

from __future__ import annotations

import pytest

from engine.packing import ContainerPlan, PackingPlan, Resource
from engine.scheduler.kubernetes import (
    KubernetesApiError,
    KubernetesConfigError,
    KubernetesScheduler,
    KubernetesSchedulerError,
)
from engine.scheduler.kubernetes.client import KubernetesClient
from tests.engine.scheduler.kubernetes.k8s_fixtures import (
    GIB,
    KEYS,
    ZK_AUTH,
    FakeClient,
    config,
    three_container_plan,
)

LAUNCH = [("create_secret", "wc-keys"),
          ("create_service", "wc"),
          ("create_stateful_set", "wc-tmanager"),
          ("create_stateful_set", "wc-executors")]


def launched(fake: FakeClient | None = None, **conf) -> tuple[KubernetesScheduler, FakeClient]:
    fake = fake or FakeClient()
    scheduler = KubernetesScheduler(config(**conf), client=fake)
    scheduler.launch("wc", "wc-0123abcd", three_container_plan(), KEYS, ZK_AUTH)
    return scheduler, fake


def plan_of(n: int, size: Resource) -> PackingPlan:
    return PackingPlan(f"p{n}", [ContainerPlan(i, required=size) for i in range(1, n + 1)])


def test_launch_creates_the_secret_the_service_then_both_statefulsets():
    scheduler, fake = launched()
    assert fake.calls == LAUNCH
    assert fake.objects["StatefulSet/wc-executors"]["spec"]["replicas"] == 3
    assert scheduler.topology_name == "wc"


def test_a_failed_create_deletes_what_this_launch_created_newest_first():
    error = KubernetesApiError(
        "creating StatefulSet streaming/wc-tmanager failed: HTTP 403 Forbidden"
    )
    fake = FakeClient(fail={("create_stateful_set", "wc-tmanager"): error})
    with pytest.raises(KubernetesApiError) as info:
        launched(fake)
    assert fake.calls == [("create_secret", "wc-keys"),
                          ("create_service", "wc"),
                          ("create_stateful_set", "wc-tmanager"),
                          ("delete_service", "wc"),
                          ("delete_secret", "wc-keys")]
    assert fake.objects == {}
    message = str(info.value)
    assert "wc-tmanager" in message and "403 Forbidden" in message
    assert "deleted what this submission had created (Service wc, Secret wc-keys)" in message


def test_an_object_that_already_existed_is_not_deleted_on_rollback():
    existing = {"Service/wc": {"kind": "Service", "metadata": {"name": "wc"}}}
    fake = FakeClient(existing=existing)
    with pytest.raises(KubernetesApiError, match="409 Conflict"):
        launched(fake)
    assert fake.calls == [("create_secret", "wc-keys"),
                          ("create_service", "wc"),
                          ("delete_secret", "wc-keys")]
    assert list(fake.objects) == ["Service/wc"]


def test_a_failed_rollback_is_reported_with_what_to_delete_by_hand():
    fake = FakeClient(
        fail={
            ("create_stateful_set", "wc-executors"): KubernetesApiError("quota exceeded"),
            ("delete_service", "wc"): KubernetesApiError(
                "deleting Service streaming/wc failed: timeout"
            ),
        }
    )
    with pytest.raises(KubernetesApiError) as info:
        launched(fake)
    assert [c for c in fake.calls if c[0].startswith("delete")] == [
        ("delete_stateful_set", "wc-tmanager"),
        ("delete_service", "wc"),
        ("delete_secret", "wc-keys"),
    ]
    assert "could not delete Service wc" in str(info.value)
    assert "by hand" in str(info.value)


def test_update_scales_the_executors_statefulset_to_the_new_container_count():
    scheduler, fake = launched()
    fake.calls.clear()
    scheduler.update(plan_of(5, Resource(2 * GIB, 1.0, GIB)))
    assert fake.calls == [("read_stateful_set", "wc-executors"),
                          ("scale_stateful_set", "wc-executors", 5)]
    fake.calls.clear()
    scheduler.update(plan_of(1, Resource(GIB, 1.0, GIB)))
    assert fake.calls == [("read_stateful_set", "wc-executors"),
                          ("scale_stateful_set", "wc-executors", 1)]


def test_update_refuses_a_plan_whose_largest_container_outgrew_the_pods():
    scheduler, fake = launched()   # executor pods: 2250m CPU, 6Gi, 5Gi disk
    fake.calls.clear()
    with pytest.raises(KubernetesSchedulerError) as info:
        scheduler.update(plan_of(4, Resource(8 * GIB, 1.0, GIB)))
    assert fake.calls == [("read_stateful_set", "wc-executors")]   # nothing scaled
    message = str(info.value)
    assert (
        "memory 8Gi (pods: 6Gi)" in message and "kill the topology and submit it again" in message
    )


def test_update_of_a_topology_that_is_not_running_is_a_clear_error():
    scheduler = KubernetesScheduler(config(**{"heron.topology.name": "wc"}), client=FakeClient())
    with pytest.raises(
        KubernetesApiError, match="StatefulSet streaming/wc-executors does not exist"
    ):
        scheduler.update(plan_of(2, Resource(GIB, 1.0, GIB)))


def test_restart_one_container_deletes_its_pod():
    scheduler, fake = launched()
    fake.calls.clear()
    scheduler.restart(1)
    scheduler.restart(3)
    scheduler.restart(0)
    assert fake.calls == [("delete_pod", "wc-executors-0"),
                          ("delete_pod", "wc-executors-2"),
                          ("delete_pod", "wc-tmanager-0")]


def test_restart_all_deletes_every_pod_of_the_topology_by_label():
    scheduler, fake = launched()
    fake.calls.clear()
    scheduler.restart(-1)
    assert fake.calls == [("delete_pods", "app=heron,topology=wc")]


def test_restart_of_a_container_that_does_not_exist_is_refused():
    scheduler, fake = launched()
    fake.calls.clear()
    with pytest.raises(KubernetesConfigError, match=r"containers 0\.\.3, not 4"):
        scheduler.restart(4)
    with pytest.raises(KubernetesConfigError, match="-1"):
        scheduler.restart(-2)
    assert fake.calls == []
    fresh = FakeClient()
    fresh.missing_pods.add("wc-executors-6")
    scheduler = KubernetesScheduler(config(**{"heron.topology.name": "wc"}), client=fresh)
    with pytest.raises(KubernetesApiError, match="pod streaming/wc-executors-6 does not exist"):
        scheduler.restart(7)


def test_kill_deletes_both_statefulsets_the_service_and_the_secret():
    scheduler, fake = launched()
    fake.calls.clear()
    scheduler.kill()
    assert fake.calls == [("delete_stateful_set", "wc-executors"),
                          ("delete_stateful_set", "wc-tmanager"),
                          ("delete_service", "wc"),
                          ("delete_secret", "wc-keys")]
    assert fake.objects == {}


def test_kill_tries_every_object_and_reports_the_ones_it_could_not_delete():
    fake = FakeClient(fail={("delete_stateful_set", "wc-tmanager"): KubernetesApiError("boom")})
    scheduler = KubernetesScheduler(config(**{"heron.topology.name": "wc"}), client=fake)
    with pytest.raises(KubernetesApiError, match="killing 'wc': boom"):
        scheduler.kill()
    assert [c[1] for c in fake.calls] == ["wc-executors", "wc-tmanager", "wc", "wc-keys"]


def test_a_fresh_scheduler_finds_the_topology_from_config_and_maps_its_name():
    fake = FakeClient()
    scheduler = KubernetesScheduler(config(**{"heron.topology.name": "Word_Count"}), client=fake)
    scheduler.kill()
    k8s = [c[1] for c in fake.calls]
    assert all(name.startswith("word-count-") for name in k8s)
    with pytest.raises(KubernetesConfigError, match=r"heron\.topology\.name"):
        KubernetesScheduler(config(), client=FakeClient()).kill()


def test_dry_run_makes_no_api_call():
    fake = FakeClient()
    KubernetesScheduler(config(), client=fake).dry_run("wc", "wc-1", three_container_plan(), KEYS)
    assert fake.calls == []


def test_bad_config_fails_before_any_api_call():
    fake = FakeClient()
    conf = config()
    del conf["heron.executor.docker.image"]
    with pytest.raises(KubernetesConfigError, match=r"heron\.executor\.docker\.image"):
        KubernetesScheduler(conf, client=fake).launch(
            "wc", "wc-1", three_container_plan(), KEYS, None
        )
    assert fake.calls == []


def test_the_default_client_uses_the_configured_namespace_and_context():
    scheduler = KubernetesScheduler(config(**{"heron.kubernetes.context": "prod"}))
    client = scheduler.client
    assert isinstance(client, KubernetesClient)
    assert (client.namespace, client.context) == ("streaming", "prod")
    conf = config()
    del conf["heron.kubernetes.namespace"]
    assert KubernetesScheduler(conf).client.namespace == "default"


def test_kill_stops_at_the_first_call_that_finds_no_server():
    from engine.scheduler.kubernetes.errors import KubernetesConnectionError
    fake = FakeClient(fail={("delete_stateful_set", "wc-executors"):
                            KubernetesConnectionError("cannot reach the Kubernetes API server")})
    scheduler = KubernetesScheduler(config(**{"heron.topology.name": "wc"}), client=fake)
    with pytest.raises(KubernetesConnectionError, match="killing 'wc': cannot reach"):
        scheduler.kill()
    assert fake.calls == [("delete_stateful_set", "wc-executors")]
