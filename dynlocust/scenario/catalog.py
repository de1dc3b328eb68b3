"""The scenarios shipped with dynlocust, by bare name: `dynlocust run quickstart` works without a clone.

The files live once, in the repository's top-level `scenarios/`; `dynlocust/scenario/shipped` is a symbolic link
to it, so the wheel carries them as package data and a checkout reads the very same files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dynlocust.scenario.loader import load_scenario
from dynlocust.scenario.model import ScenarioError

SHIPPED_DIR = Path(__file__).with_name("shipped")
SUFFIX = ".yaml"
_SENTENCE_END = re.compile(r"(?<=\.)\s")


@dataclass(frozen=True)
class ShippedScenario:
    """One shipped scenario as `dynlocust scenarios` lists it."""

    name: str
    path: Path
    summary: str
    """The first sentence of its description."""
    target: str
    """`local` (the embedded endpoint) or `remote` (AWS or an endpoint you give)."""


def shipped_names() -> list[str]:
    return sorted(p.name.removesuffix(SUFFIX) for p in SHIPPED_DIR.glob(f"*{SUFFIX}"))


def shipped_scenarios() -> list[ShippedScenario]:
    """Every shipped scenario, loaded (so a broken one fails here, with its file and line)."""
    listed = []
    for name in shipped_names():
        path = SHIPPED_DIR / f"{name}{SUFFIX}"
        scenario = load_scenario(path)
        summary = _SENTENCE_END.split(" ".join(scenario.description.split()), maxsplit=1)[0]
        listed.append(ShippedScenario(name, path, summary, "local" if scenario.is_local else "remote"))
    return listed


def is_bare_name(argument: str) -> bool:
    """A name, not a path: no directory part and no YAML suffix."""
    return Path(argument).name == argument and not argument.endswith((".yaml", ".yml"))


def resolve(argument: str) -> str:
    """The scenario file for `argument`: an existing file as given, else the shipped scenario of that bare name."""
    if Path(argument).is_file() or not is_bare_name(argument):
        return argument
    path = SHIPPED_DIR / f"{argument}{SUFFIX}"
    if path.is_file():
        return str(path)
    names = ", ".join(shipped_names())
    raise ScenarioError(argument, None, "", f"expected a scenario file or a shipped scenario ({names}), found neither")
