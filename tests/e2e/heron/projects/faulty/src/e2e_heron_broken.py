"""A component module that cannot be imported anywhere (a missing dependency)."""

import e2e_heron_no_such_dependency  # noqa: F401

from compat.storm_api import Bolt


class Never(Bolt):
    outputs = ["n"]
