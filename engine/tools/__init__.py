"""The tools a user runs against the engine, outside any topology's processes (Heron's
``heron/tools``): the ``heron`` command line (:mod:`engine.tools.cli`), the Tracker's REST
API (:mod:`engine.tools.tracker`) and the web UI (:mod:`engine.tools.ui`). No role imports
them."""
