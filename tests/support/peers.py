"""Comparison peers (moto's internals, PynamoDB): a test that compares against one must not turn silently into a
skip where it is supposed to run, so a missing peer fails the test in CI (`CI` set to true) and skips it, with
the reason, everywhere else."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

TRUE = frozenset({"1", "true", "yes"})


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in TRUE


def require_peer(module: str, why: str) -> ModuleType:
    """Import the comparison peer `module`; fail (in CI) or skip (elsewhere) naming it and `why` if it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        message = f"comparison peer {module} is missing ({exc}); {why}"
        if in_ci():
            pytest.fail(f"{message}: CI must run this comparison", pytrace=False)
        pytest.skip(message)
