"""``heron submit kubernetes`` from the command line, with no Kubernetes cluster: the
manifests of ``--dry-run`` (secrets redacted, valid against the API schema, nothing
written anywhere), and submit, update, restart and kill through the official client
against a stub API server on loopback (tests/engine/scheduler/kubernetes), with the
topology's state in a real ZooKeeper and its package in a localfs uploader directory.
This path is validated against the Kubernetes API schema and a stub, never against a
live cluster."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import pytest
import yaml

from tests.engine.cli.conftest import heron

kubernetes = pytest.importorskip("kubernetes")
kubernetes_validate = pytest.importorskip("kubernetes_validate")

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"
pytestmark = pytest.mark.timeout(120)


def k8s_cluster(home: Path, tmp_path: Path, zk_hosts: str) -> None:
    conf = home / "conf" / "k8s"
    conf.mkdir(parents=True)
    digest = tmp_path / "zk-auth"
    digest.write_text("heron:k8s-secret\n")
    digest.chmod(0o600)
    (conf / "scheduler.yaml").write_text(
        "heron.class.scheduler: kubernetes\n"
        "heron.executor.docker.image: registry.local/heron-storm-compat:0.1.0\n"
        "heron.kubernetes.namespace: streaming\n"
        "heron.kubernetes.context: offline\n")
    (conf / "statemgr.yaml").write_text(
        f"heron.class.state.manager: zookeeper\nheron.statemgr.connection.string: {zk_hosts}\n"
        f"heron.statemgr.root.path: /heron-k8s-{uuid.uuid4().hex[:8]}\n"
        f"heron.statemgr.zookeeper.auth.file: {digest}\n")
    (conf / "uploader.yaml").write_text(
        "heron.class.uploader: localfs\n"
        f"heron.uploader.localfs.file.system.directory: {tmp_path / 'packages'}\n")


def test_dry_run_prints_valid_manifests_and_writes_nothing(heron_home, tmp_path,
                                                           isolated_imports):
    # a ZooKeeper address nothing listens on: a dry run must not even connect
    k8s_cluster(heron_home, tmp_path, "127.0.0.1:1")
    result = heron("submit", "k8s", str(WORDCOUNT), "-w", "2", "--dry-run")
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.output) if d]
    assert [d["kind"] for d in docs] == ["Secret", "Service", "StatefulSet", "StatefulSet"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.30", strict=True)
    secret = docs[0]
    assert set(secret["data"].values()) == {"<redacted>"}
    tmanager, executors = docs[2], docs[3]
    assert tmanager["spec"]["replicas"] == 1 and executors["spec"]["replicas"] == 2
    assert executors["spec"]["podManagementPolicy"] == "Parallel"
    assert executors["metadata"]["labels"]["app"] == "heron"
    container = executors["spec"]["template"]["spec"]["containers"][0]
    command = " ".join(container.get("command", []) + container.get("args", []))
    assert "engine.executor.remote" in command and "--sha256" in command
    assert not (tmp_path / "packages").exists()  # nothing uploaded
    assert "k8s-secret" not in result.output


def test_a_dry_run_on_another_scheduler_is_refused(heron_home, tmp_path, isolated_imports):
    result = heron("submit", "local", str(WORDCOUNT), "--dry-run")
    assert result.exit_code == 2 and "--dry-run prints a Kubernetes" in result.output


def test_submit_update_restart_kill_through_the_client(heron_home, tmp_path, zookeeper,
                                                       monkeypatch, isolated_imports):
    from tests.engine.scheduler.kubernetes.test_kubernetes_client import StubApi, write_kubeconfig

    k8s_cluster(heron_home, tmp_path, zookeeper.hosts)
    api = StubApi()
    try:
        monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path, api.url)))
        result = heron("submit", "k8s", str(WORDCOUNT), "-w", "2")
        assert result.exit_code == 0, result.output
        posts = [path for method, path in api.requests if method == "POST"]
        assert posts == ["/api/v1/namespaces/streaming/secrets",
                         "/api/v1/namespaces/streaming/services",
                         "/apis/apps/v1/namespaces/streaming/statefulsets",
                         "/apis/apps/v1/namespaces/streaming/statefulsets"]
        secret = api.bodies[0]
        assert base64.b64decode(secret["data"]["zk-auth"]) == b"heron:k8s-secret"
        packages = list((tmp_path / "packages").glob("wordcount-*.tar.gz"))
        assert len(packages) == 1

        listed = heron("list", "--cluster", "k8s")
        assert listed.exit_code == 0 and "wordcount" in listed.output

        api.requests.clear()
        updated = heron("update", "wordcount", "--component-parallelism", "count_bolt:4",
                        "--container-number", "3", "--cluster", "k8s")
        assert updated.exit_code == 0, updated.output
        assert ("PATCH", "/apis/apps/v1/namespaces/streaming/statefulsets/"
                "wordcount-executors/scale") in [(m, p.split("?")[0]) for m, p in api.requests]

        # the StatefulSet controller's pod, which the stub has no controller to make
        pod = "/api/v1/namespaces/streaming/pods/wordcount-executors-1"
        api.objects[pod] = {"kind": "Pod", "metadata": {"name": "wordcount-executors-1"}}
        api.requests.clear()
        restarted = heron("restart", "wordcount", "2", "--cluster", "k8s")
        assert restarted.exit_code == 0, restarted.output
        assert [(m, p.split("?")[0]) for m, p in api.requests] == [
            ("DELETE", "/api/v1/namespaces/streaming/pods/wordcount-executors-1")]

        api.requests.clear()
        killed = heron("kill", "wordcount", "--cluster", "k8s", "--wait", "0")
        assert killed.exit_code == 0, killed.output
        deleted = sorted(p.split("?")[0].rsplit("/", 1)[-1] for m, p in api.requests
                         if m == "DELETE")
        assert deleted == ["wordcount", "wordcount-executors", "wordcount-keys",
                           "wordcount-tmanager"]
        assert not list((tmp_path / "packages").glob("wordcount-*.tar.gz"))
        assert "wordcount" not in heron("list", "--cluster", "k8s").output
    finally:
        api.close()
