"""The committed engine/messages/*_pb2 modules must match proto/ exactly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_proto", module)
    spec.loader.exec_module(module)
    return module


gen_proto = _load_generator()


def test_committed_generated_code_matches_schemas(tmp_path):
    gen_proto.generate(tmp_path)
    differences = gen_proto.compare(tmp_path)
    report = "\n".join(f"  engine/messages/{d.name}: {d.problem}" for d in differences)
    assert not differences, (
        f"generated protobuf code is out of date:\n{report}\n"
        f"regenerate it with: {gen_proto.COMMAND}"
    )


def test_generated_modules_import_each_other_relatively(tmp_path):
    gen_proto.generate(tmp_path)
    stmgr = (tmp_path / "stmgr_pb2.py").read_text()
    assert "from . import physical_plan_pb2 as" in stmgr
    assert "from heron" not in stmgr and "import heron" not in stmgr


def test_compare_names_an_edited_generated_file_as_stale(tmp_path):
    fresh, committed = tmp_path / "fresh", tmp_path / "committed"
    gen_proto.generate(fresh)
    gen_proto.generate(committed)
    edited = committed / "tuple_pb2.py"
    edited.write_text(edited.read_text() + "\n# hand edit\n")
    (committed / "gone_pb2.py").write_text("")
    (fresh / "new_pb2.pyi").write_text("")

    problems = {(d.name, d.problem) for d in gen_proto.compare(fresh, committed)}

    assert problems == {
        ("tuple_pb2.py", "stale"),
        ("gone_pb2.py", "extra"),
        ("new_pb2.pyi", "missing"),
    }


def test_generator_refuses_code_newer_than_the_protobuf_runtime(tmp_path, monkeypatch):
    import google.protobuf

    monkeypatch.setattr(google.protobuf, "__version__", "6.31.1")
    with pytest.raises(gen_proto.GenerationError, match=r"runtime is 6\.31\.1.*same major"):
        gen_proto.generate(tmp_path)
    assert not list(tmp_path.glob("*_pb2.py")), "nothing may be written when versions disagree"
