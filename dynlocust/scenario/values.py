"""Checking a scenario's values against the spec: mappings, numbers, text, choices, durations and sizes.

The noun here is a *value* at a key path: each check takes the plain value and its path, returns it typed, or
fails naming the line, the expectation (from `dynlocust.scenario.spec`) and what was found.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from dynlocust.dynamodb import MAX_ITEM_SIZE
from dynlocust.scenario.spec import (
    DURATION_PART_PATTERN,
    MAX_SECONDS,
    NAME_PATTERN,
    REGION_PATTERN,
    SIZE_PATTERN,
    SIZE_UNITS,
    Section,
)
from dynlocust.scenario.yaml_doc import KeyPath, YamlDoc, show

NAME_RE = re.compile(NAME_PATTERN)
REGION_RE = re.compile(REGION_PATTERN)
_SIZE_RE = re.compile(SIZE_PATTERN)
_DURATION_PART_RE = re.compile(DURATION_PART_PATTERN)
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def suggest(word: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    near = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if near:
        return f"; did you mean '{near[0]}'?"
    return f"; expected one of: {', '.join(choices)}"


def check_mapping(
    doc: YamlDoc,
    v: Any,
    path: KeyPath,
    section: Section,
    *,
    what: str = "a mapping",
    misplaced: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`v` as a mapping of the `section`'s keys (from the spec), with all its required ones."""
    if not isinstance(v, dict):
        doc.expected(path, what, v)
    allowed, required = section.keys, section.required
    for k in v:
        if not isinstance(k, str):
            doc.fail(path, f"expected text keys, found the key {show(k)}")
        if k not in allowed:
            if misplaced and k in misplaced:
                doc.fail(path, misplaced[k], at=(*path, k))
            doc.fail(path, f"unknown key '{k}'{suggest(k, allowed)}", at=(*path, k))
    for k in required:
        if k not in v:
            doc.fail(path, f"missing required key '{k}'")
    return v


def check_number(
    doc: YamlDoc,
    v: Any,
    path: KeyPath,
    what: str,
    *,
    integer: bool = False,
    positive: bool = True,
    maximum: float | None = None,
) -> float:
    ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    if ok and integer and not float(v).is_integer():
        ok = False
    if ok and (v <= 0 if positive else v < 0):
        ok = False
    if not ok:
        doc.expected(path, what, v)
    if maximum is not None and v > maximum:
        doc.fail(path, f"expected {what} no greater than {show(maximum)}, found {show(v)}")
    return float(v)


def check_int(
    doc: YamlDoc, v: Any, path: KeyPath, what: str, *, positive: bool = True, maximum: int | None = None
) -> int:
    return int(check_number(doc, v, path, what, integer=True, positive=positive, maximum=maximum))


def check_ratio(doc: YamlDoc, v: Any, path: KeyPath, *, zero_ok: bool = True) -> float:
    what = "a ratio between 0 and 1" if zero_ok else "a ratio above 0 and at most 1"
    ok = isinstance(v, int | float) and not isinstance(v, bool) and (0 <= v <= 1 if zero_ok else 0 < v <= 1)
    if not ok:
        doc.expected(path, what, v)
    return float(v)


def check_text(
    doc: YamlDoc, v: Any, path: KeyPath, what: str = "text", *, pattern: re.Pattern[str] | None = None
) -> str:
    if not isinstance(v, str) or not v.strip() or (pattern is not None and not pattern.match(v)):
        doc.expected(path, what, v)
    return v


def check_bool(doc: YamlDoc, v: Any, path: KeyPath) -> bool:
    if not isinstance(v, bool):
        doc.expected(path, "true or false", v)
    return v


def check_choice(doc: YamlDoc, v: Any, path: KeyPath, choices: Collection[str]) -> str:
    if not isinstance(v, str):
        doc.expected(path, "one of " + ", ".join(choices), v)
    if v not in choices:
        doc.fail(path, f"unknown value '{v}'{suggest(v, choices)}")
    return v


def parse_duration(v: Any) -> float | None:
    """Seconds from `15`, `"15s"`, `"2m"`, `"1h"`, `"250ms"` or `"1m30s"`; `None` if unreadable."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if not isinstance(v, str):
        return None
    s = v.strip().lower()
    total, pos = 0.0, 0
    for m in _DURATION_PART_RE.finditer(s):
        if s[pos : m.start()].strip():
            return None
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos == 0 or s[pos:].strip():
        try:
            return float(s) if pos == 0 else None
        except ValueError:
            return None
    return total


def check_duration(doc: YamlDoc, v: Any, path: KeyPath) -> float:
    d = parse_duration(v)
    if d is None or not math.isfinite(d) or d <= 0:
        doc.expected(path, "a positive duration such as 15s, 2m, 1h, 250ms or a number of seconds", v)
    if d > MAX_SECONDS:
        doc.fail(path, f"expected a duration of at most 7 days ({MAX_SECONDS:,} s), found {d:,.0f} s")
    return d


def check_size(doc: YamlDoc, v: Any, path: KeyPath, *, maximum: int = MAX_ITEM_SIZE) -> int:
    n: float | None = None
    if isinstance(v, int | float) and not isinstance(v, bool):
        n = float(v)
    elif isinstance(v, str) and (m := _SIZE_RE.match(v)):
        n = float(m.group(1)) * SIZE_UNITS[m.group(2).lower() if m.group(2) else None]
    if n is None or not math.isfinite(n) or n < 1:
        doc.expected(path, "a positive size in bytes (e.g. 1024 or 1KB)", v)
    if n > maximum:
        doc.fail(
            path,
            f"expected a size of at most {maximum:,} bytes (DynamoDB's 400 KB item limit), found {int(n):,}",
        )
    return int(n)
