"""The table's state at each window boundary: what DynamoDB said the run's tables were while the load ran.

A throttle means little without the table it hit: its billing mode, its provisioned capacity or on-demand
maximum, its warm throughput (DG "Understanding DynamoDB warm throughput", warm-throughput.html: "the number of
read and write operations your DynamoDB table can instantaneously support"), the status of the table and of
each index (a GSI backfilling) and its item count. A change made during a run (an UpdateTable, autoscaling, an
index backfill) is then visible next to the window in which it happened.

The noun here is the *table state*: `describe_state` reads one DescribeTable answer into a small JSON-safe dict,
`TableStatePoller` asks for it once per table at each window's end, in a greenlet of its own (never on the
measured path, never counted as load, never retried, bounded by the run's per-request deadline), and only the
process that owns the run polls (the master, or a standalone process: `dynlocust.plugin.roles`). `FleetMerge`
waits for a window's poll (bounded) before it closes that window, so the state lands in its record.
`changes` and `describe` put states in words for the report, the web UI and the console.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gevent

log = logging.getLogger(__name__)

POLL_SLACK_S = 1.0
"""Seconds past a boundary's deadline after which a window closes without its state (the poll greenlet starved)."""


def _pair(value: Mapping[str, Any] | None, read: str, write: str) -> dict[str, int] | None:
    """`{read, write}` from a DescribeTable pair; None when absent, zero or -1 (the service's "no maximum")."""
    if not value:
        return None
    r, w = int(value.get(read) or 0), int(value.get(write) or 0)
    if r <= 0 and w <= 0:
        return None
    return {"read": r, "write": w}


def _capacity(d: Mapping[str, Any]) -> dict[str, Any]:
    """Provisioned units, on-demand maximum and warm throughput of a table or index description."""
    warm = d.get("WarmThroughput") or {}
    out: dict[str, Any] = {
        "provisioned": _pair(d.get("ProvisionedThroughput"), "ReadCapacityUnits", "WriteCapacityUnits"),
        "on_demand_max": _pair(d.get("OnDemandThroughput"), "MaxReadRequestUnits", "MaxWriteRequestUnits"),
        "warm": _pair(warm, "ReadUnitsPerSecond", "WriteUnitsPerSecond"),
    }
    if out["warm"] is not None and warm.get("Status"):
        out["warm"]["status"] = str(warm["Status"])
    return out


def describe_state(response: Mapping[str, Any]) -> dict[str, Any]:
    """One DescribeTable answer as the state a window records (JSON-safe, small)."""
    t = response["Table"]
    billing = (t.get("BillingModeSummary") or {}).get("BillingMode") or "PROVISIONED"
    state: dict[str, Any] = {
        "status": str(t.get("TableStatus", "")),
        "billing": str(billing),
        **_capacity(t),
        "items": int(t.get("ItemCount") or 0),
    }
    if billing == "PAY_PER_REQUEST":
        state["provisioned"] = None  # an on-demand table reports 0/0
    indexes = {}
    for g in t.get("GlobalSecondaryIndexes") or ():
        index = {"status": str(g.get("IndexStatus", "")), **_capacity(g), "items": int(g.get("ItemCount") or 0)}
        if g.get("Backfilling"):
            index["backfilling"] = True
        if billing == "PAY_PER_REQUEST":
            index["provisioned"] = None
        indexes[str(g["IndexName"])] = index
    if indexes:
        state["indexes"] = indexes
    return state


def units_text(pair: Mapping[str, Any] | None) -> str:
    """`12,000/4,000` (read/write), or `-` when there is none."""
    return "-" if not pair else f"{pair['read']:,}/{pair['write']:,}"


def _units(pair: Mapping[str, Any] | None, scale: float | None) -> str:
    """`units_text`, or under an emulated capacity scale what the endpoint emulates, then what it reported:
    `300/100 (12,000/4,000 x0.025)`: DescribeTable answers the service's figures, the emulation enforces these."""
    if not pair or scale is None or scale == 1:
        return units_text(pair)
    scaled = {k: round(pair[k] * scale) for k in ("read", "write")}
    return f"{units_text(scaled)} ({units_text(pair)} x{scale:g})"


def describe(state: Mapping[str, Any], scale: float | None = None) -> str:
    """One table's state in words: `on-demand, max -, warm 12,000/4,000 r/w, ACTIVE, 120 items`; with the local
    endpoint's capacity `scale`, each capacity as emulated first (`warm 300/100 (12,000/4,000 x0.025) r/w`)."""
    if state.get("error"):
        return f"not read: {state['error']}"
    if state.get("billing") == "PAY_PER_REQUEST":
        parts = ["on-demand", f"max {_units(state.get('on_demand_max'), scale)}"]
    else:
        parts = [f"provisioned {_units(state.get('provisioned'), scale)}"]
    parts += [
        f"warm {_units(state.get('warm'), scale)} r/w",
        str(state.get("status", "")),
        f"{state.get('items', 0):,} items",
    ]
    for name, index in (state.get("indexes") or {}).items():
        backfill = " backfilling" if index.get("backfilling") else ""
        parts.append(f"index {name} {index.get('status', '')}{backfill}")
    return ", ".join(parts)


_WATCHED = ("status", "billing", "provisioned", "on_demand_max", "warm")
"""What `changes` compares (the item count moves with every write: it is shown, never reported as a change)."""


def _diff(what: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    out = []
    for key in _WATCHED:
        old, new = before.get(key), after.get(key)
        if key in ("provisioned", "on_demand_max", "warm"):
            old, new = units_text(old), units_text(new)
        if old != new:
            out.append(f"{what}{key.replace('_', ' ')} {old} -> {new}")
    if before.get("backfilling") != after.get("backfilling"):
        out.append(f"{what}backfilling {'began' if after.get('backfilling') else 'ended'}")
    return out


def changes(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """What differs between two polls of one table (its indexes too), in words; [] when either is missing."""
    if not before or not after or before.get("error") or after.get("error"):
        return []
    out = _diff("", before, after)
    old_indexes, new_indexes = before.get("indexes") or {}, after.get("indexes") or {}
    for name in sorted(set(old_indexes) | set(new_indexes)):
        if name not in old_indexes:
            out.append(f"index {name} added ({new_indexes[name].get('status', '')})")
        elif name not in new_indexes:
            out.append(f"index {name} removed")
        else:
            out += _diff(f"index {name} ", old_indexes[name], new_indexes[name])
    return out


def window_changes(previous: Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Per table, what changed between two boundaries' polls (`{"at", "tables"}`); tables without a change left out."""
    if not previous or not current:
        return {}
    old, new = previous.get("tables") or {}, current.get("tables") or {}
    found = {name: changes(old.get(name), state) for name, state in new.items()}
    return {name: lines for name, lines in found.items() if lines}


@dataclass
class TableStatePoller:
    """Polls DescribeTable for each table of a run at each window boundary, off the measured path.

    `boundaries[i]` is window i's end; the poll at it is window i's state. `client` is a retry-free botocore
    client (the set-up's: `make_client` sends one attempt, read timeout = the run's deadline); `deadline` bounds
    the whole poll of one boundary, so a slow endpoint delays a window's close by at most that.
    """

    client: Any
    tables: Mapping[str, str]
    """Logical table name -> physical name."""
    deadline: float
    boundaries: Sequence[float] = ()
    on_polled: Callable[[int], None] = lambda index: None
    clock: Callable[[], float] = time.time
    states: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Window index -> `{"at": epoch seconds, "tables": {logical: state}}`."""
    before: dict[str, Any] | None = None
    """The poll at set-up's end, before the first window (`poll_before`)."""
    stopped: bool = False
    _greenlet: gevent.Greenlet | None = None

    def poll_now(self) -> dict[str, Any]:
        """One DescribeTable per table, all within `deadline`; a table that could not be read says why."""
        at = self.clock()
        found: dict[str, dict[str, Any]] = {}
        timeout = gevent.Timeout(self.deadline)
        timeout.start()
        try:
            for logical, physical in self.tables.items():
                try:
                    found[logical] = describe_state(self.client.describe_table(TableName=physical))
                except gevent.Timeout:
                    raise
                except Exception as exc:  # a poll never fails the run: the window records why it has no state
                    found[logical] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
        except gevent.Timeout as exc:
            if exc is not timeout:
                raise
            for logical in self.tables:
                found.setdefault(logical, {"error": f"no answer within the deadline of {self.deadline:g} s"})
        finally:
            timeout.close()
        return {"at": at, "tables": found}

    def poll_before(self) -> dict[str, Any]:
        """The state before the run (set-up, not measured: called in line, before T0)."""
        self.before = self.poll_now()
        return self.before

    def last(self) -> dict[str, Any] | None:
        """The latest boundary's poll (the state after the run, once it has ended), else the one before it."""
        return self.states[max(self.states)] if self.states else self.before

    def start(self, boundaries: Sequence[float], on_polled: Callable[[int], None]) -> None:
        """Poll at each of `boundaries` (window ends, in order), calling `on_polled(index)` after each poll."""
        self.boundaries, self.on_polled = tuple(boundaries), on_polled
        self._greenlet = gevent.spawn(self._run)

    def stop(self) -> None:
        """No further polls (the run has finished or was stopped): windows still open close without waiting."""
        self.stopped = True  # a poll under way ends within its deadline; nothing waits for it any more

    def ready(self, index: int) -> bool:
        """Whether window `index` may close: its poll is in, or will not come (stopped, its boundary not reached
        because the run stopped early, or its deadline long past)."""
        if self.stopped or index in self.states or index >= len(self.boundaries):
            return True
        now = self.clock()
        boundary = self.boundaries[index]
        return now < boundary or now > boundary + self.deadline + POLL_SLACK_S

    def _run(self) -> None:
        index = 0
        # `boundaries` is read afresh: a ceiling search re-times its windows as it decides them
        while index < len(self.boundaries):
            while not self.stopped and index < len(self.boundaries) and self.boundaries[index] - self.clock() > 0:
                gevent.sleep(min(self.boundaries[index] - self.clock(), 0.25))
            if index >= len(self.boundaries):
                return
            if self.stopped:
                return
            try:
                self.states[index] = self.poll_now()
            except Exception:  # never let the greenlet die with a window waiting for it
                log.exception("polling the table state of window %d failed", index + 1)
            finally:
                if not self.stopped:
                    self.on_polled(index)
            index += 1
