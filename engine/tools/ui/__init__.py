"""The Heron UI: a small static front end (``static/``: one HTML shell, ES modules loaded
from ``heron-ui.js`` (one job each, listed at its top), one stylesheet, and uPlot for the
charts, vendored at 1.6.32 with its license as ``uPlot.iife.min.js``, ``uPlot.min.css``
and ``uPlot.LICENSE``; nothing fetched from another origin) that reads the tracker's REST
API and refreshes itself.

- ``pages.py`` mounts the page on an app: ``/ui/`` (topology list),
  ``/ui/topologies/<name>`` (one topology), ``/static/*``. The tracker mounts it on its
  own app, so ``heron tracker`` alone serves the page.
- ``app.py`` is ``heron ui``: the same page on its own port, with the API requests
  forwarded to a tracker (``--tracker URL``), as Heron's UI talks to its tracker.
- ``auth.py`` puts either app behind the user's access token (bearer header, or the
  HttpOnly cookie of the one-time link the commands print).

The DAG is laid out by the tracker (``engine.tools.tracker.dag``) and drawn by the script as
inline SVG with DOM calls, the charts over time by uPlot on canvases; every value from the
API is set as text, never as markup, and the page is served with a Content-Security-Policy
allowing only its own origin.
"""
