"""``streamparse_run`` for this project: start a component as a shell process.

``python -m compat.storm_api.run [-s json|msgpack] module.ClassName``

Storm passes the command and its script as a single argument, so a lone
argument is split on whitespace first.  The module is imported from the
working directory, or from ``./resources`` when the module file is there
(the layout of Storm >= 1.0.3).  Any spout or bolt class works, ours or a
pystorm/streamparse one.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from .serializers import SERIALIZERS

RESOURCES_PATH = "resources"


def _import_path(mod_name: str) -> str:
    import_path = os.getcwd()
    module_file = os.path.join(
        import_path, RESOURCES_PATH, mod_name.replace(".", os.path.sep) + ".py"
    )
    if RESOURCES_PATH in next(os.walk(import_path))[1] and os.path.isfile(module_file):
        return os.path.join(import_path, RESOURCES_PATH)
    return import_path


def main(argv: list[str] | None = None) -> None:
    """Import the class named on the command line and run it."""
    parser = argparse.ArgumentParser(
        description="Run a bolt/spout class",
        epilog="Used to run spout and bolt classes as Storm shell components.",
    )
    parser.add_argument("target_class", help="The bolt/spout class to start.")
    parser.add_argument(
        "-s",
        "--serializer",
        help="The serialization protocol to use to talk to Storm.",
        choices=SERIALIZERS.keys(),
        default="json",
    )
    if argv is None:
        if len(sys.argv) == 2:
            sys.argv = [sys.argv[0]] + sys.argv[1].split()
        argv = sys.argv[1:]
    elif len(argv) == 1:
        argv = argv[0].split()
    args = parser.parse_args(argv)
    mod_name, cls_name = args.target_class.rsplit(".", 1)
    sys.path.append(_import_path(mod_name))
    cls = getattr(importlib.import_module(mod_name), cls_name)
    cls(serializer=args.serializer).run()


if __name__ == "__main__":
    main()
