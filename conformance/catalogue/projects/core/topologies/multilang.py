"""A multi-lang bolt between native components: numbers -> shout (a subprocess
speaking Storm's multi-lang protocol) -> exclaim."""

from compat.storm_api import Grouping, ShellBolt, Topology

from catalogue_core import Exclaim, FixtureSpout


class MultiLang(Topology):
    config = {"topology.acker.executors": 0}

    words = FixtureSpout.spec()
    shout = ShellBolt.spec(command="streamparse_run", script="catalogue_shell.Shout",
                           inputs={words: Grouping.SHUFFLE}, par=2, outputs=["n", "word"])
    exclaim = Exclaim.spec(inputs={shout: Grouping.fields("n")}, par=2)
