"""A run id's claim on its target: which tables a run may create, and which its teardown may delete.

Two runs with one id (two CI jobs given a fixed id, a job retried while the first still runs) share table names
and the `dynlocust:run-id` tag, so the second's teardown would delete the first's tables. Hence two checks:

- up front, a run refuses an id that already has a table on the target (`find_taken`), creating nothing;
- each run tags the tables it creates with a random claim token of its own as well, and its teardown deletes a
  table only if both tags are this run's (`owned`). Two runs that start together both pass the first check; the
  loser's CreateTable is refused (ResourceInUseException), and the winner's table does not carry its token.

The token is not a credential: it only tells one process's tables from another's with the same run id.
`dynlocust cleanup --run-id ID` goes by the run-id tag alone: a dead run's leftovers have nobody left to claim them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from dynlocust.errors import DynlocustError

RUN_TAG = "dynlocust:run-id"
CLAIM_TAG = "dynlocust:claim"

log = logging.getLogger(__name__)


class RunIdTaken(DynlocustError):
    """The run id is in use on the target or in the results directory: the run must not go on with it."""


def new_claim() -> str:
    """A fresh claim token: random, so no other process's tables can carry it."""
    return uuid.uuid4().hex


def owned(tags: Mapping[str, str], run_id: str, claim: str) -> bool:
    """Whether a table with `tags` is the one this process created for `run_id` (and so may delete)."""
    return bool(run_id) and bool(claim) and tags.get(RUN_TAG) == run_id and tags.get(CLAIM_TAG) == claim


def taken_message(run_id: str, table: str) -> str:
    """The one line that refuses a run id whose table is already on the target."""
    return (
        f"--run-id {run_id}: expected a run id no table on the target uses, found table {table} of another run "
        f"with this id (running, or left behind); choose another --run-id, or `dynlocust cleanup --run-id {run_id}`"
    )


def results_taken_message(path: Path) -> str:
    """The one line that refuses a run id whose results file already exists."""
    return f"--run-id: expected a new run id, found existing results at {path}; choose another id"


def table_names(client: Any) -> list[str]:
    """Every table name on the target (ListTables, all pages)."""
    names: list[str] = []
    kwargs: dict[str, Any] = {}
    while True:
        response = client.list_tables(**kwargs)
        names += response.get("TableNames", [])
        if not response.get("LastEvaluatedTableName"):
            return names
        kwargs["ExclusiveStartTableName"] = response["LastEvaluatedTableName"]


def tags_of(client: Any, arn: str) -> dict[str, str]:
    """A table's tags (ListTagsOfResource, all pages)."""
    tags: dict[str, str] = {}
    kwargs: dict[str, Any] = {"ResourceArn": arn}
    while True:
        response = client.list_tags_of_resource(**kwargs)
        tags.update({t["Key"]: t["Value"] for t in response.get("Tags", [])})
        if not response.get("NextToken"):
            return tags
        kwargs["NextToken"] = response["NextToken"]


def find_taken(client: Any, run_id: str, names: Iterable[str], ignore: Iterable[str] = ()) -> str | None:
    """The first table of `run_id` already on the target, or None: one of `names` (those the run would create,
    whoever made it), else a table named `*-<run_id>` whose run-id tag is `run_id` (a run of another scenario with
    this id). Tables in `ignore` (the ECS launcher's results table) do not count. A role that may not list tables
    (the ECS task role) gets the first check only."""
    for name in names:
        try:
            client.describe_table(TableName=name)
        except client.exceptions.ResourceNotFoundException:
            continue
        return name
    try:
        listed = table_names(client)
    except client.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "AccessDeniedException":
            raise
        log.info("run id %s: not allowed to list tables; checked only the names this run creates", run_id)
        return None
    skip = set(ignore)
    for name in sorted(listed):
        if not name.endswith(f"-{run_id}") or name in skip:
            continue
        try:
            arn = client.describe_table(TableName=name)["Table"]["TableArn"]
        except client.exceptions.ResourceNotFoundException:
            continue
        if tags_of(client, arn).get(RUN_TAG) == run_id:
            return name
    return None
