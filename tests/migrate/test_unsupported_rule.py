"""The ``unsupported`` rule: Java components and Java groupings are ERRORs, code untouched."""

from __future__ import annotations

from libcst.codemod import CodemodTest

from migrate.rules.unsupported import UnsupportedRule

PORT = "ERROR: Java component spec: the engines cannot run it"
GROUPING = "ERROR: Java custom grouping: the engines cannot run it"


class UnsupportedRuleTest(CodemodTest):
    TRANSFORM = UnsupportedRule

    def unchanged(self, code: str, warnings: list[str]) -> None:
        self.assertCodemod(code, code, expected_warnings=warnings)

    def test_java_bolt_spec_is_an_error(self) -> None:
        self.unchanged("""
            from streamparse import JavaBolt
            b = JavaBolt.spec(full_class_name="com.x.Counter", par=2)
            """, [PORT])

    def test_aliased_module_java_spout_spec_is_an_error(self) -> None:
        self.unchanged("""
            import streamparse as sp
            s = sp.JavaSpout.spec(full_class_name="com.x.Words")
            """, [PORT])

    def test_after_imports_rule_compat_names_are_still_caught(self) -> None:
        self.unchanged("""
            from compat.storm_api import JavaSpout as JS
            s = JS.spec(full_class_name="com.x.Words")
            """, [PORT])

    def test_java_custom_groupings_are_errors(self) -> None:
        self.unchanged("""
            from streamparse import Grouping
            g = Grouping.custom_object("com.x.G", [1])
            h = Grouping.custom_serialized(b"...")
            """, [GROUPING, GROUPING])

    def test_subclass_of_java_bolt_is_an_error(self) -> None:
        self.unchanged("""
            from streamparse.storm.bolt import JavaBolt
            class Counter(JavaBolt):
                pass
            """, ["ERROR: Counter subclasses a Java component: the engines cannot run it"])

    def test_python_components_and_groupings_are_fine(self) -> None:
        self.unchanged("""
            from streamparse import Bolt, Grouping, ShellBolt
            class C(Bolt):
                pass
            s = C.spec(inputs={x: Grouping.fields("w")})
            t = ShellBolt.spec(command="node", script="x.js")
            class JavaBolt:
                pass
            u = JavaBolt.spec()
            """, [])
