"""The Heron Tracker: a REST API over the state manager and the Topology Masters.

``heron tracker`` serves it (FastAPI on uvicorn, loopback by default). Layout:

- ``app.py``: ``create_app(state_spec)``, the FastAPI application and its error replies;
- ``routes.py``: the endpoints, Heron's tracker names (``/topologies/logicalplan``...);
- ``service.py``: the ``Tracker`` (state reads, Topology Master requests, the poller);
- ``answers.py``: what each endpoint returns, built from one topology's record;
- ``history.py``: the snapshot ring buffer that time windows are computed from;
- ``dag.py``: the logical plan laid out for the page's SVG;
- ``logs.py``: finding and tailing a topology's log files;
- ``models.py``: the response shapes (``checkpoint_models.py``: ``/topologies/checkpoints``,
  ``lag_models.py``: ``/topologies/sourcelag``); ``errors.py``: 404/422/503 as exceptions.

Every request needs the user's access token (``engine.tools.ui.auth``,
``engine.common.security.access_token``; docs/security.md). The web page lives in
``engine.tools.ui`` and is mounted on the same app. Metric and exception
requests to a Topology Master go through its client, ``engine.tmanager.client`` (the Health
Manager uses it too); a Topology Master that does not answer becomes a 503.
"""

from engine.tools.tracker.app import create_app
from engine.tools.tracker.service import Tracker, TrackerSettings

__all__ = ["Tracker", "TrackerSettings", "create_app"]
