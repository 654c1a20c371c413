"""The client wrapper over the official ``kubernetes`` package, with no cluster: a stub
HTTP server on loopback answers the REST calls (recording method and path), a kubeconfig
that points at a closed port stands for an unreachable server, and a missing kubeconfig
and a missing package give one clear error each."""

from __future__ import annotations

import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.scheduler.kubernetes import (
    KubernetesApiError,
    KubernetesClientMissing,
    KubernetesScheduler,
    render_manifests,
)
from engine.scheduler.kubernetes.client import KubernetesClient
from tests.engine.scheduler.kubernetes.k8s_fixtures import (
    GIB,
    KEYS,
    ZK_AUTH,
    config,
    three_container_plan,
)

kubernetes = pytest.importorskip("kubernetes")

NS = "streaming"
SECRETS = f"/api/v1/namespaces/{NS}/secrets"
SERVICES = f"/api/v1/namespaces/{NS}/services"
PODS = f"/api/v1/namespaces/{NS}/pods"
STATEFULSETS = f"/apis/apps/v1/namespaces/{NS}/statefulsets"


class StubApi:
    """A loopback HTTP server speaking just enough of the Kubernetes REST API: objects
    created are kept, read, scaled and deleted; ``fail`` maps (method, path) to a status."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.bodies: list[object] = []
        self.objects: dict[str, dict] = {}
        self.fail: dict[tuple[str, str], int] = {}
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                path = self.path.split("?", 1)[0]
                stub.requests.append((self.command, self.path))
                stub.bodies.append(body)
                status = stub.fail.get((self.command, path))
                if status:
                    name = path.rsplit("/", 1)[-1]
                    reason = {409: "AlreadyExists", 403: "Forbidden"}.get(status, "Failure")
                    return self._reply(status, {
                        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": status,
                        "reason": reason, "message": f"stub refuses {self.command} {name}"})
                if self.command == "POST":
                    stub.objects[f"{path}/{body['metadata']['name']}"] = body
                    return self._reply(201, body)
                if self.command == "PATCH" and path.endswith("/scale"):
                    target = stub.objects.get(path[:-len("/scale")])
                    if target is None:
                        return self._not_found(path)
                    target["spec"]["replicas"] = body["spec"]["replicas"]
                    return self._reply(200, {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                             "metadata": {"name": target["metadata"]["name"]},
                                             "spec": {"replicas": body["spec"]["replicas"]}})
                if self.command == "GET":
                    if path in stub.objects:
                        return self._reply(200, stub.objects[path])
                    return self._not_found(path)
                if self.command == "DELETE":
                    if path == PODS:  # a collection delete
                        return self._reply(
                            200, {"kind": "PodList", "apiVersion": "v1", "items": []}
                        )
                    if path.startswith(PODS + "/") and path.endswith("-0"):
                        return self._reply(200, {"kind": "Status", "apiVersion": "v1",
                                                 "status": "Success"})
                    if stub.objects.pop(path, None) is None:
                        return self._not_found(path)
                    return self._reply(200, {"kind": "Status", "apiVersion": "v1",
                                             "status": "Success"})
                self._reply(405, {"kind": "Status", "apiVersion": "v1", "code": 405})

            def _not_found(self, path: str) -> None:
                self._reply(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                  "code": 404, "reason": "NotFound",
                                  "message": f"{path.rsplit('/', 1)[-1]} not found"})

            do_GET = do_POST = do_PATCH = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def stub():
    api = StubApi()
    yield api
    api.close()


def client_for(stub: StubApi) -> KubernetesClient:
    configuration = kubernetes.client.Configuration(host=stub.url)
    return KubernetesClient(NS, api_client=kubernetes.client.ApiClient(configuration),
                            request_timeout=10)


def scheduler_for(stub: StubApi) -> KubernetesScheduler:
    return KubernetesScheduler(config(), client=client_for(stub))


def test_launch_update_restart_kill_are_these_rest_calls(stub):
    scheduler = scheduler_for(stub)
    scheduler.launch("wc", "wc-1", three_container_plan(), KEYS, ZK_AUTH)
    assert stub.requests == [("POST", SECRETS), ("POST", SERVICES),
                             ("POST", STATEFULSETS), ("POST", STATEFULSETS)]
    assert [b["metadata"]["name"] for b in stub.bodies] == \
        ["wc-keys", "wc", "wc-tmanager", "wc-executors"]
    # what is sent is exactly the rendered manifests: the client's models drop nothing
    assert stub.bodies == render_manifests("wc", "wc-1", three_container_plan(), config(),
                                           keys_file_bytes=KEYS, zk_auth_bytes=ZK_AUTH)

    stub.requests.clear()
    from engine.packing import ContainerPlan, PackingPlan, Resource
    scheduler.update(PackingPlan("p", [ContainerPlan(i, required=Resource(GIB, 1.0, GIB))
                                       for i in (1, 2, 3, 4, 5)]))
    assert stub.requests == [("GET", f"{STATEFULSETS}/wc-executors"),
                             ("PATCH", f"{STATEFULSETS}/wc-executors/scale")]
    assert stub.bodies[-1] == {"spec": {"replicas": 5}}

    stub.requests.clear()
    scheduler.restart(1)
    scheduler.restart(-1)
    assert stub.requests == [("DELETE", f"{PODS}/wc-executors-0"),
                             ("DELETE", f"{PODS}?labelSelector=app%3Dheron%2Ctopology%3Dwc")]

    stub.requests.clear()
    scheduler.kill()
    # StatefulSets go with their pods first (Foreground), as Heron deletes them
    assert stub.requests == [
        ("DELETE", f"{STATEFULSETS}/wc-executors?propagationPolicy=Foreground"),
        ("DELETE", f"{STATEFULSETS}/wc-tmanager?propagationPolicy=Foreground"),
        ("DELETE", f"{SERVICES}/wc"),
        ("DELETE", f"{SECRETS}/wc-keys"),
    ]
    assert stub.objects == {}


def test_an_api_error_names_the_object_and_cause_and_the_launch_is_undone(stub):
    stub.fail[("POST", SERVICES)] = 409
    with pytest.raises(KubernetesApiError) as info:
        scheduler_for(stub).launch("wc", "wc-1", three_container_plan(), KEYS, None)
    message = str(info.value)
    assert "creating Service streaming/wc failed: HTTP 409" in message
    assert "stub refuses POST" in message
    assert stub.requests == [
        ("POST", SECRETS),
        ("POST", SERVICES),
        ("DELETE", f"{SECRETS}/wc-keys"),
    ]
    assert stub.objects == {}


def test_kill_of_objects_already_gone_succeeds(stub):
    scheduler = KubernetesScheduler(
        config(**{"heron.topology.name": "wc"}), client=client_for(stub)
    )
    scheduler.kill()
    assert len(stub.requests) == 4


def test_a_missing_kubeconfig_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    client = KubernetesClient(NS)
    with pytest.raises(KubernetesApiError, match="cannot load the kubeconfig"):
        client.delete_pod("wc-executors-0")


def test_a_context_missing_from_the_kubeconfig_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path, "http://127.0.0.1:1")))
    with pytest.raises(KubernetesApiError, match="context 'prod'"):
        KubernetesClient(NS, context="prod").delete_pod("x")


def write_kubeconfig(tmp_path: Path, server: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "offline",
        "clusters": [{"name": "offline", "cluster": {"server": server}}],
        "users": [{"name": "me", "user": {"token": "not-a-real-token"}}],
        "contexts": [{"name": "offline", "context": {"cluster": "offline", "user": "me"}}],
    }))
    return path


def test_an_unreachable_server_is_one_clear_error_naming_the_object(tmp_path, monkeypatch):
    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path, f"http://127.0.0.1:{port}")))
    scheduler = KubernetesScheduler(config(**{"heron.kubernetes.context": "offline"}))
    with pytest.raises(KubernetesApiError) as info:
        scheduler.launch("wc", "wc-1", three_container_plan(), KEYS, None)
    message = str(info.value)
    assert "creating Secret streaming/wc-keys failed" in message
    assert "cannot reach the Kubernetes API server" in message


def test_without_the_kubernetes_package_the_error_says_how_to_install_it(monkeypatch):
    for name in [m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(
        KubernetesClientMissing, match=r"pip install 'heron-storm-compat\[kubernetes\]'"
    ):
        KubernetesClient(NS).delete_pod("x")
    # rendering and dry-run never need it
    assert "kind: StatefulSet" in KubernetesScheduler(config()).dry_run(
        "wc", "wc-1", three_container_plan(), KEYS)
