"""The two implementations of the tuple path, for tests that compare them.

Without ``HERON_REQUIRE_COMPILED=1`` a machine with no compiled build skips the
comparisons (there is nothing to compare); with it (``scripts/test.sh``) a missing or
stale build fails them instead, so a broken build is never a silent skip.

``compiled_share`` runs a hypothesis comparison and then requires most calls of the
compiled functions it names to have run compiled (the module's ``path_counts()``), not
handed to the pure twin, and some to have been handed, so both are compared; each
share is printed (``-s``), recorded as a property and listed at the end of the run."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType, SimpleNamespace

import pytest

from engine.common.codec import codec as pure_codec
from engine.common.codec.selection import REQUIRE_ENV, TuplePathError, select

#: the Stream Manager's twins, one module per job (engine/stmgr/): routing, XOR maps, acking
STMGR_TWINS = ("routing", "xor", "acking")


def stmgr_twin(package: str, prefix: str) -> SimpleNamespace:
    """The Stream Manager's three pure (``prefix`` "") or compiled (``prefix`` "_") twins
    as one namespace, every name of each in one place, with one ``path_counts()`` and
    ``reset_path_counts()`` over the three: what the comparisons call."""
    modules = [importlib.import_module(f"{package}.{prefix}{name}") for name in STMGR_TWINS]
    names: dict[str, object] = {}
    for module in modules:
        names.update({k: v for k, v in vars(module).items() if not k.startswith("__")})

    def path_counts() -> dict[str, tuple[int, int]]:
        counts: dict[str, tuple[int, int]] = {}
        for module in modules:
            counts.update(module.path_counts())
        return counts

    def reset_path_counts() -> None:
        for module in modules:
            module.reset_path_counts()

    names.update(path_counts=path_counts, reset_path_counts=reset_path_counts,
                 __name__=f"{package}.{prefix}{'+'.join(STMGR_TWINS)}")
    return SimpleNamespace(**names)


@pytest.fixture(scope="session")
def compiled() -> ModuleType:
    """``engine.common.codec._codec``, checked fresh against the sources in the tree."""
    try:
        select({REQUIRE_ENV: "1"})
    except TuplePathError as exc:
        if os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
            pytest.fail(f"{REQUIRE_ENV}=1: {type(exc).__name__}: {exc}")
        pytest.skip(f"no usable compiled tuple path here: {exc}")
    return importlib.import_module("engine.common.codec._codec")


@pytest.fixture(scope="session")
def pure() -> ModuleType:
    return pure_codec


@pytest.fixture(scope="session")
def compiled_stmgr(compiled: ModuleType) -> SimpleNamespace:
    """``engine.stmgr._routing``, ``._xor`` and ``._acking`` as one (the selection checked
    every compiled module fresh)."""
    return stmgr_twin("engine.stmgr", "_")


@pytest.fixture(scope="session")
def pure_stmgr() -> SimpleNamespace:
    return stmgr_twin("engine.stmgr", "")


@pytest.fixture(scope="session")
def compiled_api(compiled: ModuleType) -> ModuleType:
    """``engine.instance._api`` (the selection checked every compiled module fresh)."""
    return importlib.import_module("engine.instance._api")


#: the share of calls a compared compiled function must handle itself (it hands the
#: rest to the pure twin); the strategies draw mostly what topologies emit, so the
#: shares measured are far above this (docs/compiled-path.md)
AT_LEAST = 0.8
_SHARES = pytest.StashKey[list]()


@pytest.fixture
def compiled_share(request: pytest.FixtureRequest,
                   record_property: Callable[[str, object], None]) -> Callable[..., None]:
    """``compiled_share(module, run, *functions, handed=())``: run the hypothesis test
    ``run`` with ``module``'s counts reset, then require each of ``functions`` to have
    been called and to have handled at least ``AT_LEAST`` of its calls itself, and each
    of ``handed`` to have handed at least one call to the pure twin (the fallback is
    compared too). Counts calls, not timings."""

    def measure(module: ModuleType, run: Callable[[], None], *functions: str,
                handed: tuple[str, ...] = ()) -> None:
        module.reset_path_counts()
        run()
        counts = module.path_counts()
        lines = request.config.stash.setdefault(_SHARES, [])
        failures = []
        for name in functions:
            here, twin = counts[name]
            total = here + twin
            share = here / total if total else 0.0
            line = (f"{request.node.name}: {name} {here}/{total} calls compiled "
                    f"({share:.1%}), {twin} handed to the pure twin")
            print(line)
            lines.append(line)
            record_property(f"compiled_share[{name}]", f"{share:.4f}")
            if not total:
                failures.append(f"{name} was never called")
            elif share < AT_LEAST:
                failures.append(f"{name}: only {share:.1%} of {total} calls compiled "
                                f"(at least {AT_LEAST:.0%} expected)")
            if name in handed and not twin:
                failures.append(f"{name}: no call handed to the pure twin (the fallback "
                                f"went untested)")
        assert not failures, "; ".join(failures)

    return measure


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = terminalreporter.config.stash.get(_SHARES, [])
    if lines:
        terminalreporter.section("compiled share of the compared calls")
        for line in lines:
            terminalreporter.write_line(line)
