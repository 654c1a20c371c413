#!/usr/bin/env python
"""Regenerate the Python protobuf modules in engine/messages/ from proto/.

Usage: python scripts/gen_proto.py [--check]

The generated code is committed so that running the engine needs only the protobuf
runtime, not a compiler. protoc comes from grpcio-tools (a test dependency), whose
bundled protoc must produce code for the same protobuf major version as the
runtime, so the script refuses to write anything when they disagree.

protoc places modules under heron/proto/ and imports them absolutely
(`from heron.proto import common_pb2`); the script flattens them into
engine/messages/ and rewrites those imports to relative ones
(`from . import common_pb2`), so the package can live anywhere.

With --check nothing is written: the exit status is 1 when the committed code
differs from what the schemas produce (tests/proto/test_generated_code_is_fresh.py
runs the same comparison).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO_ROOT = ROOT / "proto"
PROTO_PACKAGE_DIR = Path("heron") / "proto"
OUTPUT_DIR = ROOT / "engine" / "messages"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi")
COMMAND = "python scripts/gen_proto.py"

_ABSOLUTE_IMPORT = re.compile(r"^from heron\.proto import (\w+_pb2) as (\w+)$", re.MULTILINE)
_GENCODE_VERSION = re.compile(r"^# Protobuf Python Version: (\d+)\.(\d+)\.(\d+)", re.MULTILINE)


class GenerationError(RuntimeError):
    """The generator cannot produce code that the installed runtime accepts."""


@dataclass(frozen=True)
class Difference:
    """One generated file whose committed copy is missing, stale or extra."""

    name: str
    problem: str  # "missing" | "stale" | "extra"


def proto_sources() -> list[str]:
    """Schema paths relative to proto/, sorted so protoc sees a stable order."""
    directory = PROTO_ROOT / PROTO_PACKAGE_DIR
    return sorted(str(PROTO_PACKAGE_DIR / path.name) for path in directory.glob("*.proto"))


def _run_protoc(out_dir: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        *proto_sources(),
    ]
    try:
        result = subprocess.run(command, cwd=PROTO_ROOT, capture_output=True, text=True)
    except OSError as exc:  # pragma: no cover - interpreter vanished
        raise GenerationError(f"cannot run protoc: {exc}") from exc
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        if "No module named grpc_tools" in detail:
            detail = "grpcio-tools is not installed; run: pip install 'grpcio-tools>=1.85,<1.86'"
        raise GenerationError(f"protoc failed:\n{detail}")


def _check_runtime_accepts(generated: str, source_name: str) -> None:
    """Fail early, naming both versions, instead of at import time in every process."""
    from google.protobuf import __version__ as runtime_version

    match = _GENCODE_VERSION.search(generated)
    if match is None:
        raise GenerationError(
            f"{source_name}: protoc output has no 'Protobuf Python Version' header")
    gencode = tuple(int(part) for part in match.groups())
    runtime = tuple(int(part) for part in re.findall(r"\d+", runtime_version)[:3])
    if gencode[0] != runtime[0] or gencode > runtime:
        gencode_text = ".".join(map(str, gencode))
        raise GenerationError(
            f"the protoc bundled with grpcio-tools generates code for protobuf {gencode_text}, "
            f"but the installed protobuf runtime is {runtime_version}: the runtime must have the "
            f"same major version and be at least as new. Install the versions pyproject.toml "
            f"declares (protobuf>=7.35,<8 and grpcio-tools>=1.85,<1.86), then run {COMMAND}."
        )


def _make_imports_relative(text: str, source_name: str) -> str:
    rewritten = _ABSOLUTE_IMPORT.sub(r"from . import \1 as \2", text)
    if re.search(r"^(from heron\.|import heron)", rewritten, re.MULTILINE):
        raise GenerationError(f"{source_name}: an import of heron.proto was left absolute")
    return rewritten


def generate(out_dir: Path) -> list[Path]:
    """Write every generated module into out_dir (flat); return the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gen_proto_") as scratch:
        scratch_dir = Path(scratch)
        _run_protoc(scratch_dir)
        produced = sorted((scratch_dir / PROTO_PACKAGE_DIR).iterdir())
        texts = {path.name: path.read_text(encoding="utf-8") for path in produced}
    for name, text in texts.items():
        if name.endswith(".py"):
            _check_runtime_accepts(text, name)
    written = []
    for name, text in texts.items():
        target = out_dir / name
        target.write_text(_make_imports_relative(text, name), encoding="utf-8")
        written.append(target)
    return written


def _generated_names(directory: Path) -> set[str]:
    return {
        path.name
        for path in directory.iterdir()
        if path.is_file() and path.name.endswith(GENERATED_SUFFIXES)
    }


def compare(fresh_dir: Path, committed_dir: Path = OUTPUT_DIR) -> list[Difference]:
    """Differences between freshly generated files and the committed ones."""
    fresh = _generated_names(fresh_dir)
    committed = _generated_names(committed_dir) if committed_dir.is_dir() else set()
    differences = [Difference(name, "missing") for name in sorted(fresh - committed)]
    differences += [Difference(name, "extra") for name in sorted(committed - fresh)]
    for name in sorted(fresh & committed):
        if (fresh_dir / name).read_bytes() != (committed_dir / name).read_bytes():
            differences.append(Difference(name, "stale"))
    return differences


def regenerate(committed_dir: Path = OUTPUT_DIR) -> list[Path]:
    """Replace the committed generated files, removing ones whose schema is gone."""
    with tempfile.TemporaryDirectory(prefix="gen_proto_out_") as scratch:
        fresh_dir = Path(scratch)
        generate(fresh_dir)
        committed_dir.mkdir(parents=True, exist_ok=True)
        for name in _generated_names(committed_dir) - _generated_names(fresh_dir):
            (committed_dir / name).unlink()
        written = []
        for name in sorted(_generated_names(fresh_dir)):
            shutil.copyfile(fresh_dir / name, committed_dir / name)
            written.append(committed_dir / name)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="report stale generated code without writing"
    )
    args = parser.parse_args(argv)
    try:
        if args.check:
            with tempfile.TemporaryDirectory(prefix="gen_proto_check_") as scratch:
                generate(Path(scratch))
                differences = compare(Path(scratch))
            for difference in differences:
                print(f"{OUTPUT_DIR.relative_to(ROOT) / difference.name}: {difference.problem}")
            if differences:
                print(f"generated code is out of date; run: {COMMAND}", file=sys.stderr)
                return 1
            return 0
        written = regenerate()
    except GenerationError as exc:
        print(f"gen_proto: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} files to {OUTPUT_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
