"""A run id's claim: the predicate teardown deletes by, the up-front check against the in-process endpoint (real
HTTP on 127.0.0.1), and the race a check cannot see, lost at CreateTable without deleting the winner's table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import locust  # noqa: F401 - first, for gevent patching

import pytest

from dynlocust.local.embedded import serve_in_thread
from dynlocust.request.transport.boto3 import make_client
from dynlocust.run import claim, tables
from dynlocust.run.claim import CLAIM_TAG, RUN_TAG, RunIdTaken, find_taken, new_claim, owned
from dynlocust.run.tables import TableManager
from dynlocust.scenario import load_scenario_text

SCENARIO = """\
name: claim
tables: [{name: t, partition_key: {name: pk, type: S}}, {name: u, partition_key: {name: pk, type: S}}]
workload: {item_size: 100, operations: [{op: put, weight: 1, table: t}]}
phases: [{steps: [{rate: 1, window: 1s}]}]
"""


@pytest.fixture
def client() -> Iterator[Any]:
    server = serve_in_thread()
    try:
        yield make_client(server.url, region="us-east-1", connect_timeout=1, read_timeout=2, pool_size=4)
    finally:
        server.stop()


def create(client: Any, name: str, tags: dict[str, str]) -> None:
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        **({"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}),
    )


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ({RUN_TAG: "r1", CLAIM_TAG: "c1"}, True),  # created by this process
        ({RUN_TAG: "r1", CLAIM_TAG: "c2"}, False),  # another run with the same id
        ({RUN_TAG: "r1"}, False),  # the same id, no claim (an older dynlocust, the ECS results table)
        ({RUN_TAG: "r2", CLAIM_TAG: "c1"}, False),  # another run id
        ({CLAIM_TAG: "c1"}, False),
        ({}, False),  # untagged: somebody else's table
        ({RUN_TAG: "r1", CLAIM_TAG: "c1", "team": "x"}, True),  # other tags do not matter
        ({RUN_TAG: "R1", CLAIM_TAG: "c1"}, False),  # tag values compare exactly
    ],
)
def test_a_table_is_owned_only_with_this_runs_id_and_claim(tags: dict[str, str], expected: bool) -> None:
    assert owned(tags, "r1", "c1") is expected


@pytest.mark.parametrize(("run_id", "token"), [("", "c1"), ("r1", "")])
def test_an_empty_id_or_claim_owns_nothing(run_id: str, token: str) -> None:
    assert not owned({RUN_TAG: run_id, CLAIM_TAG: token}, run_id, token)


def test_claim_tokens_are_fresh() -> None:
    tokens = {new_claim() for _ in range(100)}
    assert len(tokens) == 100 and all(len(t) == 32 for t in tokens)


@pytest.mark.parametrize(
    ("existing", "tags", "taken"),
    [
        (None, {}, None),
        ("t-r1", {}, "t-r1"),  # one of the names the run creates, whoever made it
        ("x-r1", {RUN_TAG: "r1"}, "x-r1"),  # a run of another scenario with this id
        ("x-r1", {}, None),  # a name ending in the id, but not a run's table
        ("x-r1", {RUN_TAG: "r2"}, None),
        ("results-r1", {RUN_TAG: "r1"}, None),  # ignored: the ECS launcher's results table
        ("t-r2", {RUN_TAG: "r2"}, None),  # another run id
    ],
)
def test_find_taken_names_a_table_of_the_run_id(
    client: Any, existing: str | None, tags: dict[str, str], taken: str | None
) -> None:
    if existing is not None:
        create(client, existing, tags)
    assert find_taken(client, "r1", ["t-r1", "u-r1"], ignore=["results-r1"]) == taken


def test_a_taken_run_id_is_refused_before_any_table_is_created(client: Any) -> None:
    create(client, "x-r1", {RUN_TAG: "r1", CLAIM_TAG: "theirs"})
    manager = TableManager(client, load_scenario_text(SCENARIO, "c.yaml"), "r1")
    with pytest.raises(RunIdTaken) as refused:
        manager.create_all()
    assert str(refused.value) == (
        "--run-id r1: expected a run id no table on the target uses, found table x-r1 of another run with this id "
        "(running, or left behind); choose another --run-id, or `dynlocust cleanup --run-id r1`"
    )
    assert client.list_tables()["TableNames"] == ["x-r1"] and manager.created == {}


def test_the_loser_of_a_race_stops_at_create_table_and_leaves_the_winners_table(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario_text(SCENARIO, "c.yaml")
    winner = TableManager(client, scenario, "r1")
    winner.create_all()
    # the loser checked just before the winner created its tables: the check found nothing
    monkeypatch.setattr(tables, "find_taken", lambda *_a, **_kw: None)
    loser = TableManager(client, scenario, "r1")
    with pytest.raises(RunIdTaken, match=r"^--run-id r1: .* found table t-r1 .* `dynlocust cleanup --run-id r1`$"):
        loser.create_all()
    assert loser.teardown() == []
    assert sorted(client.list_tables()["TableNames"]) == ["t-r1", "u-r1"]
    assert sorted(winner.teardown()) == ["t-r1", "u-r1"]


def test_teardown_spares_a_table_of_the_same_run_id_with_another_claim(client: Any) -> None:
    scenario = load_scenario_text(SCENARIO, "c.yaml")
    first = TableManager(client, scenario, "r1")
    first.create_all()
    second = TableManager(client, scenario, "r1")  # same id, its own claim: it never created these
    for name in ("t-r1", "u-r1"):  # as if it had (a bug, or a lookup of a name whose create was refused)
        second.created[name] = client.describe_table(TableName=name)["Table"]["TableArn"]
    assert second.teardown() == []
    assert sorted(client.list_tables()["TableNames"]) == ["t-r1", "u-r1"]
    arn = client.describe_table(TableName="t-r1")["Table"]["TableArn"]
    assert claim.tags_of(client, arn) == {RUN_TAG: "r1", CLAIM_TAG: first.claim}
    assert sorted(first.teardown()) == ["t-r1", "u-r1"] and client.list_tables()["TableNames"] == []


def test_a_role_that_may_not_list_tables_still_gets_the_name_check(client: Any) -> None:
    create(client, "x-r1", {RUN_TAG: "r1"})

    def denied(**_kw: Any) -> dict[str, Any]:  # the ECS task role has no dynamodb:ListTables
        error = {"Error": {"Code": "AccessDeniedException", "Message": "not authorized to perform ListTables"}}
        raise client.exceptions.ClientError(error, "ListTables")

    client.list_tables = denied
    assert find_taken(client, "r1", ["t-r1"]) is None
    create(client, "t-r1", {})
    assert find_taken(client, "r1", ["t-r1"]) == "t-r1"
