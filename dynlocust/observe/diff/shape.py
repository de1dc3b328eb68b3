"""What must be equal for two runs to be compared: the tables' shapes and the operation mix.

It is written into the run record (`shape`) when a run starts, so a diff never depends on the scenario file
still being there or unchanged. The target (endpoint, capacity scale) and the phases are left out on purpose:
a capacity change is what a diff measures, and windows are matched by rate and phase, so added steps still compare.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynlocust.scenario.model import Scenario


def scenario_shape(scenario: Scenario) -> dict[str, Any]:
    """`{"tables": [...], "workload": {...}}`, JSON-safe."""
    shape = {
        "tables": [dataclasses.asdict(t) for t in scenario.tables],
        "workload": dataclasses.asdict(scenario.workload),
    }
    return json.loads(json.dumps(shape, default=str))  # tuples become lists, as they read back from JSON


def first_difference(base: Any, new: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first key path where two JSON values differ, with both values; None when they are equal."""
    if isinstance(base, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(base) | set(new), key=str):
            found = first_difference(base.get(key), new.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    if isinstance(base, list) and isinstance(new, list):
        if len(base) != len(new):
            return (f"{path} (length)", len(base), len(new))
        for i, (b, n) in enumerate(zip(base, new, strict=True)):
            found = first_difference(b, n, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if base == new else (path, base, new)
