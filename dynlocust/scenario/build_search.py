"""Building a scenario's model: a `search` phase, the ceiling search's settings checked against its target.

The noun is the *search* (`dynlocust.scenario.model.Search`; `dynlocust.run.search` runs it). What a JSON Schema
cannot say is checked here: a probe window long enough that the burst cannot hide more than half the precision
(`dynlocust.scenario.model.shortest_probe`), and a search is a scenario's only phase.
"""

from __future__ import annotations

import math
from typing import Any, cast

from dynlocust.scenario.model import Search, SearchOp, Target, burst_seconds, shortest_probe
from dynlocust.scenario.spec import MAX_RATE, MAX_SEARCH_WINDOWS, SEARCH, SEARCH_OPS
from dynlocust.scenario.values import check_choice, check_duration, check_int, check_mapping, check_number
from dynlocust.scenario.yaml_doc import KeyPath, YamlDoc

DEFAULT_WINDOW_MARGIN = 1.5
"""A search without `window` probes for this many times its shortest allowed window (rounded up to a second)."""


def search_of(doc: YamlDoc, v: Any, path: KeyPath, target: Target) -> Search:
    m = check_mapping(doc, v, path, SEARCH)
    start = check_number(doc, m["from"], (*path, "from"), "a positive number of requests/s", maximum=MAX_RATE)
    factor = check_number(doc, m.get("factor", 1.5), (*path, "factor"), "a growth factor above 1")
    if factor <= 1:
        doc.fail((*path, "factor"), f"expected a growth factor above 1 (each probe offers more), found {factor:g}")
    precision = check_number(doc, m.get("precision", 0.02), (*path, "precision"), "a fraction above 0, such as 0.02")
    if precision >= 1:
        doc.fail((*path, "precision"), f"expected a fraction above 0 and below 1, such as 0.02, found {precision:g}")
    max_windows = check_int(
        doc, m.get("max_windows", 15), (*path, "max_windows"), "a whole number of probes", maximum=MAX_SEARCH_WINDOWS
    )
    if max_windows < 2:
        doc.fail((*path, "max_windows"), f"expected at least 2 probes (one cannot bracket), found {max_windows}")
    shortest = shortest_probe(precision, target)
    if "window" in m:
        window = check_duration(doc, m["window"], (*path, "window"))
        if window < shortest:
            doc.fail(
                (*path, "window"),
                f"expected a probe window of at least {shortest:g} s: a burst of {burst_seconds(target):g} s lets a "
                f"shorter window hide more than a quarter of the precision of {precision:g}; found {window:g} s",
            )
    else:
        window = float(math.ceil(shortest * DEFAULT_WINDOW_MARGIN))
    cooldown = check_duration(doc, m["cooldown"], (*path, "cooldown")) if "cooldown" in m else 0.0
    op = check_choice(doc, m["op"], (*path, "op"), SEARCH_OPS) if "op" in m else None
    return Search(start, window, factor, precision, max_windows, cooldown, cast(SearchOp | None, op))
