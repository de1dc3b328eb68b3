"""A run's leftover tables, found by the run-id tag and deleted: what `dynlocust cleanup --run-id ID` does.

A run whose process died (a lost master, a kill -9) leaves its tables; only a table whose `dynlocust:run-id` tag
names the run is ever listed, so a table of another run, or an untagged one, is never touched. The claim tag
(`dynlocust.run.claim`) does not matter here: a dead run's tables have no process left to claim them.
"""

from __future__ import annotations

from typing import Any

from dynlocust.run.claim import RUN_TAG, table_names, tags_of


def tables_of_run(client: Any, run_id: str) -> list[str]:
    """The tables whose run-id tag is `run_id`, in name order (a table deleted meanwhile is skipped)."""
    found: list[str] = []
    for name in sorted(table_names(client)):
        try:
            arn = client.describe_table(TableName=name)["Table"]["TableArn"]
        except client.exceptions.ResourceNotFoundException:
            continue
        if tags_of(client, arn).get(RUN_TAG) == run_id:
            found.append(name)
    return found


def delete_tables(client: Any, names: list[str]) -> list[str]:
    """Delete `names`; the ones already gone are not an error. The names deleted."""
    deleted: list[str] = []
    for name in names:
        try:
            client.delete_table(TableName=name)
        except client.exceptions.ResourceNotFoundException:
            continue
        deleted.append(name)
    return deleted
