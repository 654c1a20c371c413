"""The ``imports`` rule as before/after pairs (libcst CodemodTest style), each fed back in
to pin idempotency."""

from __future__ import annotations

from libcst.codemod import CodemodTest

from migrate.rules.imports import ImportsRule


class ImportsRuleTest(CodemodTest):
    TRANSFORM = ImportsRule

    def check(self, before: str, after: str) -> None:
        """Migrate, then migrate the result again: the second pass must change nothing."""
        self.assertCodemod(before, after)
        self.assertCodemod(after, after)

    def test_from_import_of_top_level_names_moves_to_compat(self) -> None:
        self.check(
            """
            from streamparse import Grouping, Topology  # the DSL

            class WordCount(Topology):
                pass
            """,
            """
            from compat.storm_api import Grouping, Topology  # the DSL

            class WordCount(Topology):
                pass
            """,
        )

    def test_unrelated_imports_are_left_alone(self) -> None:
        self.check(
            """
            import os
            from collections import Counter
            from mypkg.streamparse import Bolt
            streamparse = 3
            print(streamparse.real)
            """,
            """
            import os
            from collections import Counter
            from mypkg.streamparse import Bolt
            streamparse = 3
            print(streamparse.real)
            """,
        )

    def test_aliased_module_import_keeps_alias_and_uses(self) -> None:
        self.check(
            """
            import streamparse as sp

            x = sp.Grouping.fields("word")
            """,
            """
            import compat.storm_api as sp

            x = sp.Grouping.fields("word")
            """,
        )

    def test_aliased_name_import_keeps_alias(self) -> None:
        self.check(
            "from streamparse import Bolt as B\nclass C(B): pass\n",
            "from compat.storm_api import Bolt as B\nclass C(B): pass\n",
        )

    def test_attribute_chains_on_plain_module_import_are_rewritten(self) -> None:
        self.check(
            """
            import streamparse

            class C(streamparse.Bolt):  # a bolt
                g = streamparse.Grouping.fields("w")
            """,
            """
            import compat.storm_api

            class C(compat.storm_api.Bolt):  # a bolt
                g = compat.storm_api.Grouping.fields("w")
            """,
        )

    def test_streamparse_storm_collapses_onto_top_level(self) -> None:
        self.check(
            """
            import streamparse.storm
            from streamparse.storm.bolt import Bolt
            s = streamparse.storm.Spout
            """,
            """
            import compat.storm_api
            from compat.storm_api.bolt import Bolt
            s = compat.storm_api.Spout
            """,
        )

    def test_from_streamparse_import_storm_becomes_a_module_import(self) -> None:
        self.check(
            """
            from streamparse import storm
            from streamparse import storm as st

            class C(storm.Bolt):
                s = st.Spout
            """,
            """
            import compat.storm_api as storm
            import compat.storm_api as st

            class C(storm.Bolt):
                s = st.Spout
            """,
        )

    def test_storm_module_mixed_with_names_is_an_error_with_a_fix(self) -> None:
        before = "from streamparse import storm, Bolt\n"
        self.assertCodemod(before, before, expected_warnings=[
            "ERROR: storm not provided by compat.storm_api (from streamparse)"])

    def test_missing_name_through_a_module_alias_is_warned(self) -> None:
        code = """
            import streamparse as sp
            import streamparse.storm as st
            from streamparse import storm

            a = sp.NoSuchThing.make()
            b = st.Bolt
            c = storm.AlsoMissing
            """
        after = code.replace("import streamparse as sp", "import compat.storm_api as sp").replace(
            "import streamparse.storm as st", "import compat.storm_api as st").replace(
            "from streamparse import storm", "import compat.storm_api as storm")
        self.assertCodemod(code, after, expected_warnings=[
            "WARNING: compat.storm_api has no NoSuchThing (used as sp.NoSuchThing.make, "
            "where sp is streamparse)",
            "WARNING: compat.storm_api has no AlsoMissing (used as storm.AlsoMissing, "
            "where storm is streamparse.storm)",
        ])

    def test_thrift_structs_come_from_compat_thrift(self) -> None:
        self.check(
            "from streamparse.thrift import GlobalStreamId\n",
            "from compat.storm_api.thrift import GlobalStreamId\n",
        )

    def test_submodules_map_to_matching_compat_modules(self) -> None:
        self.check(
            """
            from streamparse.dsl import Stream
            from streamparse.bolt import BatchingBolt
            from streamparse.spout import ReliableSpout
            from streamparse.component import Component
            import streamparse.dsl
            g = streamparse.dsl.Grouping.SHUFFLE
            """,
            """
            from compat.storm_api.dsl import Stream
            from compat.storm_api.bolt import BatchingBolt
            from compat.storm_api.spout import ReliableSpout
            from compat.storm_api.component import Component
            import compat.storm_api.dsl
            g = compat.storm_api.dsl.Grouping.SHUFFLE
            """,
        )

    def test_pystorm_moves_to_compat(self) -> None:
        self.check(
            """
            import pystorm
            from pystorm.bolt import Bolt
            from pystorm import Spout, Tuple
            b = pystorm.Bolt
            """,
            """
            import compat.storm_api
            from compat.storm_api.bolt import Bolt
            from compat.storm_api import Spout, Tuple
            b = compat.storm_api.Bolt
            """,
        )

    def test_name_missing_in_matching_submodule_comes_from_top_level(self) -> None:
        self.check(
            "from streamparse.storm.bolt import JavaBolt\n",
            "from compat.storm_api import JavaBolt\n",
        )

    def test_star_import_moves(self) -> None:
        self.check("from streamparse import *\n", "from compat.storm_api import *\n")

    def test_module_without_counterpart_is_an_error_and_left_alone(self) -> None:
        before = "import streamparse.cli\nfrom streamparse.util import get_env_config\n"
        self.assertCodemod(before, before, expected_warnings=[
            "ERROR: no compat.storm_api module for streamparse.cli",
            "ERROR: get_env_config not provided by compat.storm_api (from streamparse.util)",
        ])

    def test_already_migrated_code_is_unchanged(self) -> None:
        code = """
            import compat.storm_api as sp
            from compat.storm_api import Bolt
            from compat.storm_api.thrift import GlobalStreamId
            x = sp.Grouping.fields("a")
            """
        self.assertCodemod(code, code)

    def test_layout_and_comments_outside_rewrites_are_kept(self) -> None:
        self.check(
            """
            # header comment
            from streamparse import (  # why
                Bolt,
                Spout,   # trailing
            )


            def f():  # keep
                return   1
            """,
            """
            # header comment
            from compat.storm_api import (  # why
                Bolt,
                Spout,   # trailing
            )


            def f():  # keep
                return   1
            """,
        )

    def test_local_names_shadowing_streamparse_are_not_rewritten(self) -> None:
        self.check(
            """
            def f(streamparse):
                return streamparse.Bolt
            import streamparse
            class C:
                streamparse = 1
                def g(self):
                    return streamparse.Spout
            """,
            """
            def f(streamparse):
                return streamparse.Bolt
            import compat.storm_api
            class C:
                streamparse = 1
                def g(self):
                    return compat.storm_api.Spout
            """,
        )
