"""A Metrics Manager's Prometheus endpoint (engine/metricsmgr/prometheus.py) serves its
metrics only to requests carrying the user's access token as a bearer token (what a
Prometheus scrape config's ``authorization: credentials_file`` sends); anything else is
a 401 with no metrics, counted."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.common.security.access_token import auth_header, load_or_create
from engine.metricsmgr.manager import endpoint_token
from engine.metricsmgr.prometheus import LatestMetricsCollector, PrometheusEndpoint

pytestmark = pytest.mark.timeout(30)
TOKEN = "test-access-token-0123456789abcdefghijklmnop"


def snapshot():
    yield "split", "container_1_split_2", {"__emit-count": "42", "__last-error": "boom"}


@pytest.fixture
def endpoint():
    served = PrometheusEndpoint(LatestMetricsCollector("wc", 1, snapshot), TOKEN)
    try:
        yield served
    finally:
        served.close()


def get(url: str, headers: dict[str, str]) -> tuple[int, str, dict[str, str]]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as answer:
            return answer.status, answer.read().decode(), dict(answer.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def test_without_the_bearer_token_it_is_401_and_no_metrics(endpoint):
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                    {"Authorization": f"Bearer {TOKEN}x"}, {"Cookie": f"heron_token_0={TOKEN}"}):
        status, body, answer_headers = get(endpoint.url, headers)
        assert status == 401, headers
        assert "heron_" not in body and "access token" in body
        assert answer_headers["WWW-Authenticate"] == 'Bearer realm="heron"'
    assert endpoint.refused == 5


def test_with_the_bearer_token_it_serves_the_metrics(endpoint):
    status, body, headers = get(endpoint.url, auth_header(TOKEN))
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    samples = {(s.name, s.labels["instance"]): s.value
               for family in text_string_to_metric_families(body) for s in family.samples}
    assert samples == {("heron_emit_count", "container_1_split_2"): 42.0}
    assert endpoint.refused == 0


def test_a_metrics_manager_takes_the_token_of_its_users_heron_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "env-home"))
    # heron submit --home HOME: the working dir is HOME/topologies/NAME
    submitted = tmp_path / "home" / "topologies" / "wc"
    assert endpoint_token(submitted) == load_or_create(tmp_path / "home")
    # heron run, a cluster node: the home of the user's environment
    assert endpoint_token(tmp_path / "project" / "logs" / "wc-heron-1") == \
        load_or_create(tmp_path / "env-home")


def test_an_unusable_token_file_refuses_everyone(tmp_path):
    home = tmp_path / "home"
    load_or_create(home)
    (home / "access-token").chmod(0o644)
    assert endpoint_token(home / "topologies" / "wc") is None
    served = PrometheusEndpoint(LatestMetricsCollector("wc", 1, snapshot), None)
    try:
        assert get(served.url, auth_header(TOKEN))[0] == 401
        assert get(served.url, {})[0] == 401
    finally:
        served.close()
