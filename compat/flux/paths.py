"""What a Flux file's path alone says: whether it is one, and where its shell components
start. Apart from the reader, so that a process rebuilding a streamparse topology can ask
without loading the Flux reader (every instance asks at start-up)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["FLUX_SUFFIXES", "is_flux_file", "shell_dir_of"]

FLUX_SUFFIXES = (".yaml", ".yml")


def is_flux_file(path: Path | str) -> bool:
    """Whether ``path`` names a Flux topology (by its suffix: .yaml or .yml)."""
    return Path(path).suffix.lower() in FLUX_SUFFIXES


def shell_dir_of(flux_file: Path | str) -> Path:
    """Where a Flux topology's shell components start: ``resources/`` beside the file
    when it exists (Storm runs them from the jar's ``resources/``), else the file's
    directory."""
    directory = Path(flux_file).resolve().parent
    resources = directory / "resources"
    return resources if resources.is_dir() else directory
