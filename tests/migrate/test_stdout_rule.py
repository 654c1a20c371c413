"""The ``stdout`` rule: print() in component code is reported; --unsafe rewrites it."""

from __future__ import annotations

from libcst.codemod import CodemodTest

from migrate.rules.stdout import StdoutRule

REPORTED = ("WARNING: print() in component code goes to the component log "
            "(--unsafe rewrites it to self.logger.info)")
REWRITTEN = ("WARNING: unsafe rewrite: print() became self.logger.info() "
             "(log format and level differ from stdout)")

BOLT = """
    from streamparse import Bolt
    class B(Bolt):
        def process(self, tup):
            print("got", tup)  # debug
    """


class StdoutRuleTest(CodemodTest):
    TRANSFORM = StdoutRule

    def test_print_in_bolt_is_reported_but_kept_by_default(self) -> None:
        self.assertCodemod(BOLT, BOLT, expected_warnings=[REPORTED])

    def test_unsafe_rewrites_print_to_logger_and_is_idempotent(self) -> None:
        after = """
            from streamparse import Bolt
            class B(Bolt):
                def process(self, tup):
                    self.logger.info("%s %s", "got", tup)  # debug
            """
        self.assertCodemod(BOLT, after, unsafe=True, expected_warnings=[REWRITTEN])
        self.assertCodemod(after, after, unsafe=True, expected_warnings=[])

    def test_print_with_file_or_sep_is_only_reported_even_when_unsafe(self) -> None:
        code = """
            import sys
            import streamparse as sp
            class S(sp.Spout):
                def next_tuple(self):
                    print("x", file=sys.stderr)
                    print("a", "b", sep="-")
            """
        self.assertCodemod(code, code, unsafe=True, expected_warnings=[
            "WARNING: print() in component code goes to the component log"] * 2)

    def test_subclass_of_a_local_component_counts_as_component(self) -> None:
        before = """
            from compat.storm_api import Bolt
            class Base(Bolt):
                pass
            class Child(Base):
                def process(me, tup):
                    print()
            """
        after = before.replace("print()", 'me.logger.info("")')
        self.assertCodemod(before, after, unsafe=True, expected_warnings=[REWRITTEN])

    def test_print_outside_components_is_fine(self) -> None:
        code = """
            class Helper:
                def f(self):
                    print(1)
            def main():
                print(2)
            print(3)
            """
        self.assertCodemod(code, code, unsafe=True, expected_warnings=[])

    def test_shadowed_print_is_not_touched(self) -> None:
        code = """
            from streamparse import Bolt
            from mylib import print
            class B(Bolt):
                def process(self, tup):
                    print(tup)
            """
        self.assertCodemod(code, code, unsafe=True, expected_warnings=[])
