"""The built-in conformance catalogue: cases, their fixture projects and inputs, and
the pure functions that compute each case's expected output."""

from conformance.catalogue.case import (
    CAPABILITIES,
    FIXTURES,
    PROJECTS,
    Case,
    CaseError,
    Kill,
    Row,
)
from conformance.catalogue.cases import CATALOGUE, HERONPY_CASES, case_named, select_cases

__all__ = [
    "CAPABILITIES",
    "CATALOGUE",
    "HERONPY_CASES",
    "FIXTURES",
    "PROJECTS",
    "Case",
    "CaseError",
    "Kill",
    "Row",
    "case_named",
    "select_cases",
]
