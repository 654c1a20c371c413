"""The Kubernetes manifests: valid against the Kubernetes API schema (offline, with
kubernetes-validate's bundled schemas), named and labelled like Heron's, sized from the
packing plan, running the pod command contract, and overridable by template."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from engine.packing import ContainerPlan, PackingPlan, pack_first_fit_decreasing, pack_round_robin
from engine.scheduler.kubernetes import (
    KubernetesConfigError,
    KubernetesScheduler,
    kubernetes_name,
    render_manifests,
)
from engine.scheduler.kubernetes.manifests import TEMPLATES_DIR
from engine.scheduler.kubernetes.names import MAX_NAME, is_dns_1123_label
from engine.scheduler.kubernetes.quantities import bytes_quantity, cpu_quantity, parse_quantity
from tests.engine.scheduler.kubernetes.k8s_fixtures import (
    GIB,
    KEYS,
    MIB,
    SHA,
    ZK_AUTH,
    config,
    one_container_plan,
    three_container_plan,
)

REPO = Path(__file__).resolve().parents[4]
#: the Kubernetes API versions the manifests are validated against (schemas bundled
#: with kubernetes-validate; 1.30 is the oldest the test extra's floor guarantees)
K8S_VERSIONS = ["1.30", kubernetes_validate.latest_version()]


@pytest.fixture
def wordcount_plan(isolated_imports) -> PackingPlan:
    """examples/wordcount compiled (a fields-grouped count bolt) and packed round-robin
    over 3 containers with per-component RAM."""
    from engine.common.plan import compile_topology, discovery, load_topology_class
    saved = dict(discovery._LOADED)
    try:
        cls = load_topology_class(REPO / "examples" / "wordcount" / "topologies" / "wordcount.py")
        conf = {"topology.workers": 3,
                "topology.component.rammap": "count_bolt:536870912,word_spout:268435456"}
        plan = compile_topology(cls, name="wordcount", config=conf).plan
        assert any(i.grouping == "fields" for c in plan.components.values() for i in c.inputs)
        return pack_round_robin(plan, conf)
    finally:
        discovery._LOADED.clear()
        discovery._LOADED.update(saved)


def ffd_plan() -> PackingPlan:
    from engine.common.plan import ComponentDef, InputDef, LogicalPlan, StreamDef
    plan = LogicalPlan(
        "ffd",
        [
            ComponentDef(
                "spout",
                "spout",
                2,
                outputs={"default": StreamDef("spout", "default", ("w",))},
                python_class="spouts:S",
            ),
            ComponentDef(
                "bolt",
                "bolt",
                3,
                outputs={},
                inputs=(InputDef("spout", "default", "fields", ("w",)),),
                python_class="bolts:B",
            ),
        ],
        {},
    )
    return pack_first_fit_decreasing(plan, {"topology.container.max.ram.hint": 3 * GIB})


def render(packing=None, name="wordcount", *, zk_auth=ZK_AUTH, **conf):
    return render_manifests(name, f"{name}-0123abcd", packing or three_container_plan(),
                            config(**conf), keys_file_bytes=KEYS, zk_auth_bytes=zk_auth)


def by_kind(docs):
    secret, service, tmanager, executors = docs
    assert [d["kind"] for d in docs] == ["Secret", "Service", "StatefulSet", "StatefulSet"]
    return secret, service, tmanager, executors


def executor_container(statefulset):
    (container,) = statefulset["spec"]["template"]["spec"]["containers"]
    return container


# -- schema ----------------------------------------------------------------------------
@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("plan_name", ["one container", "three containers", "wordcount",
                                       "first fit decreasing", "no zk auth"])
def test_manifests_validate_against_the_kubernetes_api_schema(plan_name, version, request):
    if plan_name == "wordcount":
        docs = render(request.getfixturevalue("wordcount_plan"), "wordcount")
    elif plan_name == "one container":
        docs = render(one_container_plan(), "wc")
    elif plan_name == "first fit decreasing":
        docs = render(ffd_plan(), "Fields_Grouped.Topology")
    elif plan_name == "no zk auth":
        docs = render(three_container_plan(), zk_auth=None)
    else:
        docs = render(three_container_plan())
    assert len(docs) == 4
    for doc in docs:
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_schema_check_is_real_a_misspelt_field_fails():
    _, _, _, executors = by_kind(render())
    executors["spec"]["podManagmentPolicy"] = executors["spec"].pop("podManagementPolicy")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(executors, "1.30", strict=True)


# -- names, labels, shape ----------------------------------------------------------------
def test_objects_are_named_labelled_and_shaped_like_herons():
    secret, service, tmanager, executors = by_kind(render(three_container_plan(), "wordcount"))
    labels = {"app": "heron", "topology": "wordcount"}
    assert secret["metadata"]["name"] == "wordcount-keys"
    assert service["metadata"]["name"] == "wordcount"
    assert tmanager["metadata"]["name"] == "wordcount-tmanager"
    assert executors["metadata"]["name"] == "wordcount-executors"
    for doc in (secret, service, tmanager, executors):
        assert doc["metadata"]["labels"] == labels
        assert doc["metadata"]["namespace"] == "streaming"
        assert doc["metadata"]["annotations"]["heron/topology-id"] == "wordcount-0123abcd"
        assert doc["metadata"]["annotations"]["heron/topology-name"] == "wordcount"
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == labels
    assert tmanager["spec"]["replicas"] == 1
    assert executors["spec"]["replicas"] == 3
    for sts, role in ((tmanager, "tmanager"), (executors, "executors")):
        assert sts["spec"]["podManagementPolicy"] == "Parallel"
        assert sts["spec"]["serviceName"] == "wordcount"
        assert sts["spec"]["selector"]["matchLabels"] == {**labels, "role": role}
        assert sts["spec"]["template"]["metadata"]["labels"] == {**labels, "role": role}
        container = executor_container(sts)
        assert container["image"] == "registry.example/heron-storm-compat:0.1.0"


def test_executor_replicas_follow_the_container_count_of_each_plan(wordcount_plan):
    assert by_kind(render(one_container_plan()))[3]["spec"]["replicas"] == 1
    assert (
        by_kind(render(wordcount_plan))[3]["spec"]["replicas"]
        == len(wordcount_plan.containers)
        == 3
    )


def test_executor_pods_are_sized_for_the_largest_container_per_resource():
    _, _, tmanager, executors = by_kind(render(three_container_plan()))
    resources = executor_container(executors)["resources"]
    # RAM from container 1, CPU from container 2, disk from container 3 (its instances)
    expected = {"cpu": "2250m", "memory": "6Gi", "ephemeral-storage": "5Gi"}
    assert resources == {"requests": expected, "limits": expected}
    # the Topology Master is not in the plan: 1 CPU, 1 GiB, 1 GiB by default
    default = {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi"}
    assert executor_container(tmanager)["resources"] == {"requests": default, "limits": default}


def test_round_robin_containers_are_all_sized_alike_with_padding(wordcount_plan):
    size = wordcount_plan.containers[0].required
    resources = executor_container(by_kind(render(wordcount_plan))[3])["resources"]["limits"]
    assert parse_quantity(resources["memory"]) == size.ram
    assert parse_quantity(resources["cpu"]) == pytest.approx(size.cpu)
    assert parse_quantity(resources["ephemeral-storage"]) == size.disk


def test_tmanager_size_and_ephemeral_storage_are_configurable():
    _, _, tmanager, executors = by_kind(render(**{
        "heron.kubernetes.tmanager.cpu": "0.5", "heron.kubernetes.tmanager.ram": str(512 * MIB),
        "heron.kubernetes.ephemeral.storage": "false"}))
    assert executor_container(tmanager)["resources"]["limits"] == {"cpu": "500m", "memory": "512Mi"}
    assert "ephemeral-storage" not in executor_container(executors)["resources"]["limits"]


# -- the pod command -----------------------------------------------------------------------
def run_pod_script(container: dict, tmp_path: Path, pod_name: str) -> list[str]:
    """Run the pod's ``sh -c`` script as the kubelet would, with a ``python3`` on PATH
    that prints its arguments: what the executor bootstrap would receive."""
    assert container["command"] == ["sh", "-c"]
    (script,) = container["args"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "python3"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "POD_NAME": pod_name, "POD_IP": "10.1.2.3"}
    out = subprocess.run(["sh", "-c", script], env=env, capture_output=True, text=True,
                         timeout=20, check=True)
    return out.stdout.splitlines()


def expected_args(name: str, container: int, zk_auth: bool = True) -> list[str]:
    args = ["-m", "engine.executor.remote", "--topology", name, "--topology-id",
            f"{name}-0123abcd", "--container", str(container),
            "--package", "https://packages.example/wc.tar.gz?token=a&b=c", "--sha256", SHA,
            "--zk", "zk-0.zk:2181,zk-1.zk:2181", "--zk-root", "/heron"]
    if zk_auth:
        args += ["--zk-auth-file", "/var/run/heron/secrets/zk-auth"]
    return args + ["--keys-file", "/var/run/heron/secrets/topology.keys", "--bind-host", "10.1.2.3"]


def test_pod_command_runs_the_remote_executor_for_the_pods_container(tmp_path):
    name = "Word Count's $(rm -rf /)"   # quoting must survive anything in a name
    _, _, tmanager, executors = by_kind(render(three_container_plan(), name))
    k8s = kubernetes_name(name)
    assert run_pod_script(executor_container(tmanager), tmp_path, f"{k8s}-tmanager-0") == \
        expected_args(name, 0)
    assert run_pod_script(executor_container(executors), tmp_path, f"{k8s}-executors-0") == \
        expected_args(name, 1)
    assert run_pod_script(executor_container(executors), tmp_path, f"{k8s}-executors-11") == \
        expected_args(name, 12)


def test_without_a_zk_digest_the_secret_and_command_have_no_zk_auth(tmp_path):
    secret, _, _, executors = by_kind(render(zk_auth=None))
    assert set(secret["data"]) == {"topology.keys"}
    container = executor_container(executors)
    assert run_pod_script(container, tmp_path, "wordcount-executors-1") == \
        expected_args("wordcount", 2, zk_auth=False)
    assert [m["subPath"] for m in container["volumeMounts"]] == ["topology.keys"]


def test_pod_ip_and_name_come_from_the_downward_api():
    env = executor_container(by_kind(render())[3])["env"]
    fields = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") for e in env}
    assert fields["POD_IP"] == "status.podIP"
    assert fields["POD_NAME"] == "metadata.name"


def test_secret_holds_the_keys_and_digest_base64_and_is_mounted_read_only_0400():
    secret, _, tmanager, executors = by_kind(render())
    assert secret["type"] == "Opaque"
    assert base64.b64decode(secret["data"]["topology.keys"]) == KEYS
    assert base64.b64decode(secret["data"]["zk-auth"]) == ZK_AUTH
    for sts in (tmanager, executors):
        pod = sts["spec"]["template"]["spec"]
        (volume,) = pod["volumes"]
        assert volume["secret"] == {"secretName": "wordcount-keys", "defaultMode": 0o400}
        mounts = executor_container(sts)["volumeMounts"]
        assert {(m["mountPath"], m["subPath"], m["readOnly"], m["name"]) for m in mounts} == {
            ("/var/run/heron/secrets/topology.keys", "topology.keys", True, volume["name"]),
            ("/var/run/heron/secrets/zk-auth", "zk-auth", True, volume["name"])}
        assert pod["automountServiceAccountToken"] is False


# -- dry run -----------------------------------------------------------------------------
def test_dry_run_output_has_no_secret_data():
    scheduler = KubernetesScheduler(config())
    text = scheduler.dry_run(
        "wordcount", "wordcount-0123abcd", three_container_plan(), KEYS, ZK_AUTH
    )
    docs = list(yaml.safe_load_all(text))
    assert [d["kind"] for d in docs] == ["Secret", "Service", "StatefulSet", "StatefulSet"]
    assert docs[0]["data"] == {"topology.keys": "<redacted>", "zk-auth": "<redacted>"}
    for secret in (KEYS, ZK_AUTH):
        encoded = base64.b64encode(secret).decode()
        assert encoded not in text and encoded[:40] not in text
        assert secret.decode() not in text
    assert "heron:s3cret" not in text
    # everything else is what launch would create
    assert docs[1:] == render()[1:]


# -- bad input ---------------------------------------------------------------------------
def test_a_missing_docker_image_is_an_error_naming_the_key():
    conf = config()
    del conf["heron.executor.docker.image"]
    with pytest.raises(KubernetesConfigError, match=r"heron\.executor\.docker\.image is required"):
        render_manifests("wc", "wc-1", one_container_plan(), conf, keys_file_bytes=KEYS)
    with pytest.raises(KubernetesConfigError, match=r"heron\.executor\.docker\.image"):
        KubernetesScheduler(conf).dry_run("wc", "wc-1", one_container_plan(), KEYS)


@pytest.mark.parametrize("key", ["heron.package.url", "heron.package.sha256",
                                 "heron.statemgr.connection.string"])
def test_other_required_keys_are_named_when_missing(key):
    conf = config()
    conf[key] = ""
    with pytest.raises(KubernetesConfigError, match=key.replace(".", r"\.")):
        render_manifests("wc", "wc-1", one_container_plan(), conf, keys_file_bytes=KEYS)


@pytest.mark.parametrize("key, value, message", [
    ("heron.package.sha256", "abc", "64 hex digits"),
    ("heron.statemgr.root.path", "heron", "absolute path"),
    ("heron.kubernetes.namespace", "Not_A_Namespace", "not a valid namespace"),
    ("heron.kubernetes.image.pull.policy", "Sometimes", "must be one of"),
    ("heron.kubernetes.tmanager.cpu", "lots", "must be a number"),
])
def test_invalid_values_are_refused_naming_key_and_value(key, value, message):
    conf = config()
    conf[key] = value
    with pytest.raises(KubernetesConfigError, match=message) as info:
        render_manifests("wc", "wc-1", one_container_plan(), conf, keys_file_bytes=KEYS)
    assert key in str(info.value)


def test_a_plan_whose_container_ids_are_not_1_to_n_is_refused():
    plan = PackingPlan("gap", [ContainerPlan(1), ContainerPlan(3)])
    with pytest.raises(KubernetesConfigError, match=r"container ids must be 1\.\.2"):
        render(plan)
    with pytest.raises(KubernetesConfigError, match="no containers"):
        render(PackingPlan("empty", []))


def test_empty_keys_are_refused():
    with pytest.raises(KubernetesConfigError, match="keys file"):
        render_manifests("wc", "wc-1", one_container_plan(), config(), keys_file_bytes=b"")


# -- names -------------------------------------------------------------------------------
def test_valid_topology_names_are_kept_and_others_mapped_to_dns_labels():
    assert kubernetes_name("wordcount") == "wordcount"
    assert kubernetes_name("word-count-2") == "word-count-2"
    seen = set()
    for name in ["WordCount", "word_count", "word-count_", "word.count", "2words", "___",
                 "Ünïcode tôpology", "x" * 200, "wordcount-" + "y" * 40]:
        k8s = kubernetes_name(name)
        assert is_dns_1123_label(k8s) and k8s[0].isalpha() and len(k8s) <= MAX_NAME, k8s
        assert len(f"{k8s}-executors") <= 52
        assert kubernetes_name(name) == k8s  # deterministic: kill finds what launch made
        seen.add(k8s)
    assert len(seen) == 9  # word_count and word-count_ do not collide
    assert kubernetes_name("WordCount").startswith("wordcount-")
    with pytest.raises(KubernetesConfigError, match="non-empty"):
        kubernetes_name("")


def test_a_mapped_name_is_used_everywhere_and_the_original_kept():
    docs = render(name="My_Topology")
    k8s = kubernetes_name("My_Topology")
    secret, service, tmanager, executors = by_kind(docs)
    assert service["metadata"]["name"] == k8s
    assert executors["metadata"]["name"] == f"{k8s}-executors"
    assert secret["metadata"]["name"] == f"{k8s}-keys"
    assert executors["metadata"]["labels"]["topology"] == k8s
    assert executors["metadata"]["annotations"]["heron/topology-name"] == "My_Topology"


# -- templates ---------------------------------------------------------------------------
def test_a_users_template_replaces_ours_by_name(tmp_path):
    ours = (TEMPLATES_DIR / "service.yaml.j2").read_text()
    custom = ours.replace("  clusterIP: None\n",
                          "  clusterIP: None\n  ports:\n    - {name: metrics, port: 9090}\n")
    custom = custom.replace("  labels: {{ labels | json }}",
                            "  labels: {{ dict(labels, team='streaming') | json }}")
    assert custom != ours
    (tmp_path / "service.yaml.j2").write_text(custom)
    docs = render(**{"heron.kubernetes.templates.dir": str(tmp_path)})
    secret, service, tmanager, executors = by_kind(docs)
    assert service["spec"]["ports"] == [{"name": "metrics", "port": 9090}]
    assert service["metadata"]["labels"]["team"] == "streaming"
    assert executors == render()[3]  # the others still come from us
    for doc in docs:
        kubernetes_validate.validate(doc, "1.30", strict=True)


def test_the_shared_pod_template_can_be_overridden_too(tmp_path):
    ours = (TEMPLATES_DIR / "_pod.yaml.j2").read_text()
    (tmp_path / "_pod.yaml.j2").write_text(
        ours.replace("  enableServiceLinks: false\n",
                     "  enableServiceLinks: false\n  priorityClassName: streaming\n"))
    _, _, tmanager, executors = by_kind(render(**{"heron.kubernetes.templates.dir": str(tmp_path)}))
    for sts in (tmanager, executors):
        assert sts["spec"]["template"]["spec"]["priorityClassName"] == "streaming"


@pytest.mark.parametrize("text, message", [
    ("kind: Service\nmetadata: {name: {{ nope }}}\n", "'nope' is undefined"),
    ("{% if %}\n", "service.yaml.j2:1"),
    ("apiVersion: v1\nkind: [unclosed\n", "does not render valid YAML"),
    ("just a string\n", "must render one Kubernetes object"),
])
def test_a_broken_user_template_is_a_clear_error_naming_the_file(tmp_path, text, message):
    (tmp_path / "service.yaml.j2").write_text(text)
    with pytest.raises(KubernetesConfigError, match=message) as info:
        render(**{"heron.kubernetes.templates.dir": str(tmp_path)})
    assert "service.yaml.j2" in str(info.value)


def test_a_missing_templates_dir_is_named(tmp_path):
    with pytest.raises(
        KubernetesConfigError, match=r"heron\.kubernetes\.templates\.dir: .*nowhere"
    ):
        render(**{"heron.kubernetes.templates.dir": str(tmp_path / "nowhere")})


# -- quantities ------------------------------------------------------------------------------
def test_quantities_round_trip():
    assert (
        cpu_quantity(1.0) == "1" and cpu_quantity(2.25) == "2250m" and cpu_quantity(0.0005) == "1m"
    )
    assert bytes_quantity(GIB) == "1Gi" and bytes_quantity(1536 * MIB) == "1536Mi"
    assert bytes_quantity(1000) == "1000"
    for text, value in [("500m", 0.5), ("2", 2), ("1Gi", GIB), ("1.5Gi", 1.5 * GIB),
                        ("1e3", 1000), ("1k", 1000), ("128974848", 128974848), ("1E", 10 ** 18)]:
        assert float(parse_quantity(text)) == pytest.approx(value)
    with pytest.raises(ValueError):
        parse_quantity("lots")
