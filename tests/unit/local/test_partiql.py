"""PartiQL on the local endpoint: the parser, and the three operations over HTTP with boto3 (an in-thread server)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynlocust.local.embedded import ThreadedEndpoint
from dynlocust.local.errors import ServiceError
from dynlocust.local.partiql import Const, Name, Node, parse
from tests.unit.local import test_throttling
from tests.unit.local.conftest import create_table, error_of, wire
from tests.unit.local.test_throttling import FakeCapacity

# the throttling tests' fixtures: an endpoint whose capacity model rejects on demand
fake = test_throttling.fake
throttled_endpoint = test_throttling.throttled_endpoint

# ------------------------------------------------------------------------------------------------ parser


def test_parse_select_with_index_projection_and_where() -> None:
    st = parse('SELECT a.b[2], "c d" FROM "my.table"."idx" WHERE pk = ? AND n >= -1.5e3', [{"S": "x"}])
    assert (st.kind, st.table, st.index) == ("SELECT", "my.table", "idx")
    assert st.projection == [["a", "b", 2], ["c d"]]
    assert st.where == Node(
        "AND",
        [Node("=", [Name(["pk"]), Const({"S": "x"})]), Node(">=", [Name(["n"]), Const({"N": "-1500"})])],
    )


def test_parse_unquoted_table_name_with_hyphen() -> None:
    st = parse("select id from T-1a2b-c;")
    assert (st.table, st.index, st.projection) == ("T-1a2b-c", None, [["id"]])


def test_parse_insert_literals() -> None:
    st = parse("INSERT INTO t VALUE {'pk': 'it''s', 'n': 1, 'b': TRUE, 'z': NULL, 'l': [1, 'x'], 's': <<'a', 'b'>>}")
    assert st.item == {
        "pk": {"S": "it's"},
        "n": {"N": "1"},
        "b": {"BOOL": True},
        "z": {"NULL": True},
        "l": {"L": [{"N": "1"}, {"S": "x"}]},
        "s": {"SS": ["a", "b"]},
    }


def test_parse_update_clauses_and_returning() -> None:
    st = parse(
        "UPDATE t SET a = a + 1, b = list_append(b, [2]) SET c = 'x' REMOVE d, e.f WHERE pk = 'k' "
        "RETURNING MODIFIED NEW *"
    )
    assert [p for p, _ in st.sets] == [["a"], ["b"], ["c"]]
    assert st.removes == [["d"], ["e", "f"]]
    assert st.returning == "UPDATED_NEW"


def test_parse_condition_forms() -> None:
    st = parse(
        "SELECT * FROM t WHERE NOT (a BETWEEN 1 AND 2) OR b IN ['x', 'y'] OR c IS NOT MISSING OR begins_with(d, 'p')"
    )
    assert isinstance(st.where, Node) and st.where.op == "OR"
    assert [t.op for t in st.where.args] == ["NOT", "IN", "IS", "begins_with"]
    assert st.where.args[2].flag == "NOT MISSING"


MALFORMED = "Statement wasn't well formed, can't be processed: "


@pytest.mark.parametrize(
    ("text", "params", "message"),
    [
        ("SELEC * FROM t", None, MALFORMED + "Expected data manipulation"),
        ("SELECT * FROM t WHERE", None, MALFORMED + "Unexpected term"),
        ("SELECT * FROM t WHERE a = 'open", None, MALFORMED + "unterminated"),
        ("UPDATE t SET a = 1 WHERE pk = 'a' garbage", None, MALFORMED + "Unexpected token after expression"),
        ("SELECT * FROM t WHERE a = ?", None, "Number of parameters in request and statement don't match."),
        ("SELECT * FROM t WHERE a = ?", [{"S": "1"}, {"S": "2"}], "Number of parameters in request and statement"),
        ("UPDATE t WHERE pk = 'a'", None, MALFORMED + "expected SET or REMOVE"),
        (
            "DELETE FROM t WHERE pk = 'a' RETURNING ALL NEW *",
            None,
            "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements.",
        ),
        ("INSERT INTO t VALUE {'pk': 'a'} RETURNING ALL OLD *", None, "RETURNING is not supported in INSERT"),
        ("INSERT INTO t VALUE 'a'", None, "Unsupported format in item expression. Please use struct format {...}"),
        ("INSERT INTO t.i VALUE {'pk': 'a'}", None, "This operation is not supported on an index"),
        ("SELECT *, a FROM t", None, "Other attributes should not be present in the projection when '*' is used."),
        ("SELECT * FROM t WHERE a = MISSING", None, "MISSING must be compared using IS operator"),
        ("SELECT * FROM t WHERE lower(a) = 'x'", None, "Unrecognized function: lower"),
        ("INSERT INTO t VALUE {'pk': 'a', 's': <<>>}", None, "Empty bags are not supported"),
        ("INSERT INTO t VALUE {'pk': 'a', 's': <<1, 'x'>>}", None, "Unsupported data type in Bag."),
        ("SELECT * FROM t WHERE h = 1e99999999999", None, MALFORMED),
        (
            "SELECT * FROM t WHERE h = ?",
            [{"N": "1e99999999999"}],
            "The parameter cannot be converted to a numeric value: 1e99999999999",
        ),
    ],
)
def test_parse_errors_are_validation_exceptions(text: str, params: Any, message: str) -> None:
    with pytest.raises(ServiceError) as exc:
        parse(text, params)
    assert exc.value.code == "ValidationException"
    assert exc.value.message.startswith(message)


# ------------------------------------------------------------------------------------------------ over HTTP


def _items(client: Any, n: int, table: str = "tab1", pad: int = 0) -> None:
    for i in range(n):
        item = {"pk": {"S": f"k{i}"}, "n": {"N": str(i)}, "m": {"M": {"x": {"L": [{"S": f"v{i}"}]}}}}
        if pad:
            item["pad"] = {"S": "p" * pad}
        client.put_item(TableName=table, Item=item)


def test_select_star_projection_and_non_key_where(client: Any) -> None:
    create_table(client, range_type=None)
    _items(client, 4)
    got = client.execute_statement(Statement="SELECT * FROM tab1")["Items"]
    assert sorted(i["pk"]["S"] for i in got) == ["k0", "k1", "k2", "k3"]
    got = client.execute_statement(
        Statement='SELECT m.x[0], "n" FROM tab1 WHERE n >= 2 AND m.x[0] <> ?', Parameters=[{"S": "v3"}]
    )
    assert got["Items"] == [{"m": {"M": {"x": {"L": [{"S": "v2"}]}}}, "n": {"N": "2"}}]


def test_key_equality_reads_like_a_query_and_a_scan_costs_more(client: Any) -> None:
    create_table(client, range_type=None)
    _items(client, 10, pad=3000)
    one = client.execute_statement(Statement="SELECT pk FROM tab1 WHERE pk = 'k3'", ReturnConsumedCapacity="TOTAL")
    assert one["Items"] == [{"pk": {"S": "k3"}}]
    assert one["ConsumedCapacity"] == {"TableName": "tab1", "CapacityUnits": 0.5}
    scan = client.execute_statement(Statement="SELECT pk FROM tab1 WHERE n = 3", ReturnConsumedCapacity="INDEXES")
    assert scan["Items"] == [{"pk": {"S": "k3"}}]
    # ten ~3 KB items read by a scan: 8 units of 4 KB, halved for an eventually consistent read
    assert scan["ConsumedCapacity"]["CapacityUnits"] == 4.0
    assert scan["ConsumedCapacity"]["Table"] == {"CapacityUnits": 4.0}


def test_in_on_the_partition_key_is_one_query_per_value(client: Any) -> None:
    create_table(client, range_type=None)
    _items(client, 10, pad=3000)
    stmt = "SELECT pk FROM tab1 WHERE pk IN ['k1', 'k7', 'k1', 'nope'] AND n > 1"
    got = client.execute_statement(Statement=stmt, ReturnConsumedCapacity="TOTAL")
    assert got["Items"] == [{"pk": {"S": "k7"}}]
    # three queries of one (or no) ~3 KB item each, eventually consistent: not the 4.0 units of a scan
    assert got["ConsumedCapacity"] == {"TableName": "tab1", "CapacityUnits": 1.5}
    seen: list[str] = []
    kwargs: dict[str, Any] = {}
    for _ in range(10):
        page = client.execute_statement(
            Statement="SELECT pk FROM tab1 WHERE pk IN ['k2', 'k3', 'k4']", Limit=1, **kwargs
        )
        seen += [i["pk"]["S"] for i in page["Items"]]
        if "NextToken" not in page:
            break
        kwargs = {"NextToken": page["NextToken"]}
    assert seen == ["k2", "k3", "k4"]


def test_sort_key_condition_and_order_by(client: Any) -> None:
    create_table(client)
    for sk in range(5):
        client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "sk": {"N": str(sk)}})
    client.put_item(TableName="tab1", Item={"pk": {"S": "b"}, "sk": {"N": "1"}})
    got = client.execute_statement(
        Statement="SELECT sk FROM tab1 WHERE pk = 'a' AND sk BETWEEN 1 AND 3 ORDER BY sk DESC"
    )
    assert [i["sk"]["N"] for i in got["Items"]] == ["3", "2", "1"]


def test_limit_and_next_token_page_through_every_item(client: Any) -> None:
    create_table(client, range_type=None)
    _items(client, 7)
    seen: list[str] = []
    kwargs: dict[str, Any] = {}
    pages = 0
    while pages < 10:
        page = client.execute_statement(Statement="SELECT pk FROM tab1", Limit=3, **kwargs)
        pages += 1
        assert len(page["Items"]) <= 3
        seen += [i["pk"]["S"] for i in page["Items"]]
        if "NextToken" not in page:
            break
        kwargs = {"NextToken": page["NextToken"]}
    assert sorted(seen) == [f"k{i}" for i in range(7)]
    assert pages == 3
    token = client.execute_statement(Statement="SELECT pk FROM tab1", Limit=1)["NextToken"]
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM tab1", NextToken=token)
    assert error_of(exc)[2] == "NextToken does not match request"
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT pk FROM tab1", NextToken="not-a-token")
    assert error_of(exc)[2] == "Invalid NextToken"


def test_select_on_indexes_and_unknown_ones(client: Any) -> None:
    gsi = {
        "IndexName": "gsi1",
        "KeySchema": [{"AttributeName": "gk", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    create_table(client, range_type=None, gsis=[gsi], extra_attrs={"gk": "S"})
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "gk": {"S": "x"}})
    client.put_item(TableName="tab1", Item={"pk": {"S": "b"}})
    assert client.execute_statement(Statement='SELECT * FROM "tab1"."gsi1"')["Items"] == [
        {"pk": {"S": "a"}, "gk": {"S": "x"}}
    ]
    got = client.execute_statement(Statement="SELECT pk FROM tab1.gsi1 WHERE gk = 'x'")
    assert got["Items"] == [{"pk": {"S": "a"}}]
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM tab1.gsi1", ConsistentRead=True)
    assert error_of(exc)[2] == "Strongly consistent read is not supported on Global Secondary Indexes"
    with pytest.raises(ClientError) as exc:
        client.execute_transaction(TransactStatements=[{"Statement": "SELECT * FROM tab1.gsi1 WHERE pk = 'a'"}])
    assert error_of(exc)[2] == "Reads on indices are not supported within transactions."
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM tab1.nope")
    assert error_of(exc) == (400, "ValidationException", "The table does not have the specified index")
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM nope")
    assert error_of(exc) == (400, "ResourceNotFoundException", "Requested resource not found")


def test_insert_refuses_an_existing_key(client: Any) -> None:
    create_table(client, range_type=None)
    resp = client.execute_statement(Statement="INSERT INTO tab1 VALUE {'pk': 'a', 'attr': {'sth': ['other']}}")
    assert resp["Items"] == []
    assert client.get_item(TableName="tab1", Key={"pk": {"S": "a"}})["Item"] == {
        "pk": {"S": "a"},
        "attr": {"M": {"sth": {"L": [{"S": "other"}]}}},
    }
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="INSERT INTO tab1 VALUE {'pk': ?}", Parameters=[{"S": "a"}])
    assert error_of(exc) == (400, "DuplicateItemException", "Duplicate primary key exists in table")
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="INSERT INTO tab1 VALUE {'other': 'a'}")
    assert error_of(exc)[1:] == ("ValidationException", "Key attribute should be present in the item: Key pk")
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="INSERT INTO tab1 VALUE {'pk': 1}")
    assert error_of(exc)[2] == "Key attribute's data type should match its data type in table's schema: Key pk"


def test_update_set_remove_sets_and_returning(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(
        TableName="tab1",
        Item={"pk": {"S": "a"}, "n": {"N": "1"}, "gone": {"S": "x"}, "s": {"SS": ["p"]}, "l": {"L": []}},
    )
    resp = client.execute_statement(
        Statement="UPDATE tab1 SET n = n + ?, s = set_add(s, <<'q'>>) SET l = list_append(l, [1]) REMOVE gone "
        "WHERE pk = 'a' RETURNING ALL NEW *",
        Parameters=[{"N": "4"}],
    )
    assert resp["Items"] == [{"pk": {"S": "a"}, "n": {"N": "5"}, "s": {"SS": ["p", "q"]}, "l": {"L": [{"N": "1"}]}}]
    resp = client.execute_statement(
        Statement="UPDATE tab1 SET s = set_delete(s, <<'p'>>) WHERE pk = 'a' RETURNING MODIFIED OLD *"
    )
    assert resp["Items"] == [{"s": {"SS": ["p", "q"]}}]
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="UPDATE tab1 SET pk = 'b' WHERE pk = 'a'")
    assert "Cannot update attribute pk" in error_of(exc)[2]


def test_update_of_a_missing_item_or_a_false_condition_fails_the_condition(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    for stmt in ("UPDATE tab1 SET n = 2 WHERE pk = 'zz'", "UPDATE tab1 SET n = 2 WHERE pk = 'a' AND n = 7"):
        with pytest.raises(ClientError) as exc:
            client.execute_statement(Statement=stmt)
        assert error_of(exc) == (400, "ConditionalCheckFailedException", "The conditional request failed")
    with pytest.raises(ClientError) as exc:
        client.execute_statement(
            Statement="UPDATE tab1 SET n = 2 WHERE pk = 'a' AND n = 7", ReturnValuesOnConditionCheckFailure="ALL_OLD"
        )
    assert exc.value.response["Item"] == {"pk": {"S": "a"}, "n": {"N": "1"}}
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="UPDATE tab1 SET n = 2 WHERE n = 1")
    assert error_of(exc) == (
        400,
        "ValidationException",
        "Where clause does not contain a mandatory equality on all key attributes",
    )
    assert client.get_item(TableName="tab1", Key={"pk": {"S": "a"}})["Item"]["n"] == {"N": "1"}


def test_delete_needs_the_full_key_and_honours_its_condition(client: Any) -> None:
    create_table(client)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}})
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="DELETE FROM tab1 WHERE pk = 'a'")
    assert error_of(exc)[1] == "ValidationException"
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="DELETE FROM tab1 WHERE pk = 'a' AND sk = 1 AND v = 'y'")
    assert error_of(exc)[1] == "ConditionalCheckFailedException"
    # no such item: success, nothing deleted
    assert client.execute_statement(Statement="DELETE FROM tab1 WHERE pk = 'b' AND sk = 1")["Items"] == []
    resp = client.execute_statement(Statement="DELETE FROM tab1 WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *")
    assert resp["Items"] == [{"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "x"}}]
    assert client.scan(TableName="tab1")["Items"] == []


def test_batch_answers_each_statement(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "v": {"S": "x"}})
    resp = client.batch_execute_statement(
        Statements=[
            {"Statement": "SELECT v FROM tab1 WHERE pk = ?", "Parameters": [{"S": "a"}]},
            {"Statement": "SELECT * FROM tab1 WHERE pk = 'missing'"},
            {"Statement": "SELECT * FROM tab1 WHERE v = 'x'"},
            {"Statement": "SELECT * FROM nope WHERE pk = 'a'"},
            {"Statement": "SELECT * FROM tab1 WHERE pk = ?"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert resp["Responses"] == [
        {"TableName": "tab1", "Item": {"v": {"S": "x"}}},
        {"TableName": "tab1"},
        {
            "TableName": "tab1",
            "Error": {
                "Code": "ValidationError",
                "Message": "Select statements within BatchExecuteStatement must specify the primary key in the where "
                "clause.",
            },
        },
        {"Error": {"Code": "ResourceNotFound", "Message": "Requested resource not found"}},
        {"Error": {"Code": "ValidationError", "Message": "Number of parameters in request and statement don't match."}},
    ]
    assert resp["ConsumedCapacity"] == [{"TableName": "tab1", "CapacityUnits": 1.0}]


def test_batch_writes_and_their_errors(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    resp = client.batch_execute_statement(
        Statements=[
            {"Statement": "INSERT INTO tab1 VALUE {'pk': 'a'}"},
            {"Statement": "INSERT INTO tab1 VALUE {'pk': 'b'}"},
            {
                "Statement": "UPDATE tab1 SET v = 2 WHERE pk = 'a' AND v = 5",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            },
            {"Statement": "DELETE FROM tab1 WHERE pk = 'a'"},
        ],
        ReturnConsumedCapacity="INDEXES",
    )
    # the two writes done, one unit each; a refused statement reports none. Not a transaction: no
    # WriteCapacityUnits (as BatchWriteItem, in the AWS CLI's batch-write-item example)
    assert resp["ConsumedCapacity"] == [{"TableName": "tab1", "CapacityUnits": 2.0, "Table": {"CapacityUnits": 2.0}}]
    assert resp["Responses"] == [
        {"TableName": "tab1", "Error": {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}},
        {"TableName": "tab1"},
        {
            "TableName": "tab1",
            "Error": {
                "Code": "ConditionalCheckFailed",
                "Message": "The conditional request failed",
                "Item": {"pk": {"S": "a"}, "v": {"N": "1"}},
            },
        },
        {"TableName": "tab1"},
    ]
    assert sorted(i["pk"]["S"] for i in client.scan(TableName="tab1")["Items"]) == ["b"]
    with pytest.raises(ClientError) as exc:
        client.batch_execute_statement(
            Statements=[
                {"Statement": "SELECT * FROM tab1 WHERE pk = 'b'"},
                {"Statement": "DELETE FROM tab1 WHERE pk = 'b'"},
            ]
        )
    assert error_of(exc)[1] == "ValidationException"


def test_transaction_writes_are_all_or_nothing(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    with pytest.raises(ClientError) as exc:
        client.execute_transaction(
            TransactStatements=[
                {"Statement": "INSERT INTO tab1 VALUE {'pk': 'new'}"},
                {"Statement": "DELETE FROM tab1 WHERE pk = 'other'"},
                {"Statement": "INSERT INTO tab1 VALUE {'pk': 'a'}"},
            ]
        )
    assert error_of(exc)[1] == "TransactionCanceledException"
    assert exc.value.response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "None"},
        {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"},
    ]
    assert client.scan(TableName="tab1")["Items"] == [{"pk": {"S": "a"}, "v": {"N": "1"}}]
    resp = client.execute_transaction(
        TransactStatements=[
            {"Statement": "EXISTS(SELECT * FROM tab1 WHERE pk = 'a' AND v = 1)"},
            {"Statement": "INSERT INTO tab1 VALUE {'pk': 'new'}"},
        ],
        ReturnConsumedCapacity="TOTAL",
    )
    assert resp["ConsumedCapacity"] == [{"TableName": "tab1", "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    assert len(client.scan(TableName="tab1")["Items"]) == 2
    with pytest.raises(ClientError) as exc:
        client.execute_transaction(
            TransactStatements=[
                {"Statement": "EXISTS(SELECT * FROM tab1 WHERE pk = 'a' AND v = 9)"},
                {"Statement": "DELETE FROM tab1 WHERE pk = 'new'"},
            ]
        )
    assert [r["Code"] for r in exc.value.response["CancellationReasons"]] == ["ConditionalCheckFailed", "None"]


def test_transaction_reads_answer_one_response_per_statement(client: Any) -> None:
    create_table(client, range_type=None)
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "v": {"N": "1"}, "w": {"S": "x"}})
    client.put_item(TableName="tab1", Item={"pk": {"S": "b"}, "v": {"N": "1"}})
    resp = client.execute_transaction(
        TransactStatements=[
            {"Statement": "SELECT w FROM tab1 WHERE pk = ?", "Parameters": [{"S": "a"}]},
            {"Statement": "SELECT * FROM tab1 WHERE pk = 'b'"},
            {"Statement": "SELECT * FROM tab1 WHERE pk = 'zz'"},
        ]
    )
    assert resp["Responses"] == [{"Item": {"w": {"S": "x"}}}, {"Item": {"pk": {"S": "b"}, "v": {"N": "1"}}}, {}]
    with pytest.raises(ClientError) as exc:  # a read by key names the key alone: no other condition
        client.execute_transaction(TransactStatements=[{"Statement": "SELECT * FROM tab1 WHERE pk = 'a' AND v = 1"}])
    assert error_of(exc)[:2] == (400, "ValidationException")
    assert "Select statements within ExecuteTransaction must specify the primary key" in error_of(exc)[2]
    for statements in (
        [{"Statement": "SELECT * FROM tab1"}],
        [{"Statement": "SELECT * FROM tab1 WHERE pk = 'a'"}, {"Statement": "DELETE FROM tab1 WHERE pk = 'a'"}],
    ):
        with pytest.raises(ClientError) as exc:
            client.execute_transaction(TransactStatements=statements)
        assert error_of(exc)[1] == "ValidationException"


# ------------------------------------------------------------------------------------------------ throttling


def test_statements_are_charged_and_throttled_like_the_operations_they_stand_for(
    throttled_endpoint: ThreadedEndpoint, make_client: Any, fake: FakeCapacity
) -> None:
    throttled = throttled_endpoint
    client = make_client(throttled)
    create_table(client, range_type=None)
    client.execute_statement(Statement="INSERT INTO tab1 VALUE {'pk': 'a'}")
    client.execute_statement(Statement="SELECT * FROM tab1 WHERE pk = 'a'")
    assert fake.charges[-2:] == [("tab1", None, "write", 1.0, "a"), ("tab1", None, "read", 0.5, "a")]
    fake.reject.add((None, "a"))
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="UPDATE tab1 SET v = 1 WHERE pk = 'a'")
    assert error_of(exc)[1] == "ThrottlingException"
    resp = client.batch_execute_statement(
        Statements=[
            {"Statement": "SELECT * FROM tab1 WHERE pk = 'a'"},
            {"Statement": "SELECT * FROM tab1 WHERE pk = 'b'"},
        ]
    )
    assert resp["Responses"][0]["Error"]["Code"] == "ThrottlingError"
    assert resp["Responses"][1] == {"TableName": "tab1"}
    assert throttled.stats()["tables"]["tab1"]["BatchExecuteStatement"]["unprocessed_items"] == 1
    with pytest.raises(ClientError) as exc:
        client.execute_transaction(TransactStatements=[{"Statement": "UPDATE tab1 SET v = 1 WHERE pk = 'a'"}])
    assert exc.value.response["CancellationReasons"][0]["Code"] == "ThrottlingError"


def test_statement_lists_are_bounded(client: Any) -> None:
    create_table(client, range_type=None)
    with pytest.raises(ClientError) as exc:
        client.batch_execute_statement(
            Statements=[{"Statement": f"SELECT * FROM tab1 WHERE pk = 'k{i}'"} for i in range(26)]
        )
    assert error_of(exc) == (
        400,
        "ValidationException",
        "1 validation error detected: Value at 'statements' failed to satisfy constraint: "
        "Member must have length less than or equal to 25",
    )
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM tab1 WHERE pk = '" + "x" * 8200 + "'")
    assert error_of(exc)[2].endswith("Member must have length less than or equal to 8192")


def test_statements_refused_in_the_service_words(client: Any) -> None:
    gsi = {
        "IndexName": "multi",
        "KeySchema": [{"AttributeName": "h1", "KeyType": "HASH"}, {"AttributeName": "h2", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "ALL"},
    }
    create_table(client, gsis=[gsi], extra_attrs={"h1": "S", "h2": "S"})
    client.put_item(TableName="tab1", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "s": {"SS": ["x"]}})
    cases = [
        (
            "SELECT * FROM tab1.multi WHERE h1 = 'a'",
            "PartiQL statements cannot be executed on tables with multi-attribute",
        ),
        ("SELECT * FROM tab1 ORDER BY sk", "Must have WHERE clause in the statement when using ORDER BY clause."),
        ("SELECT * FROM tab1 WHERE sk = 1 ORDER BY sk", "Must have at least one non-optional hash key condition"),
        ("SELECT * FROM tab1 WHERE pk = 'a' ORDER BY s", "Variable reference s in ORDER BY clause must be part of"),
        ("SELECT * FROM ab", "Table name should be within the length [3, 255]"),
        ("UPDATE tab1 SET s = set_add(s, 'y') WHERE pk = 'a' AND sk = 1", "The second argument to SET_ADD must be"),
        (
            "UPDATE tab1 SET s = set_add(t, <<'y'>>) WHERE pk = 'a' AND sk = 1",
            "The first argument to SET_ADD must equal",
        ),
        ("DELETE FROM tab1 WHERE pk = 'a' AND sk = 1 AND sk = 2", "Multiple conditions on same key sk."),
        ("EXISTS(SELECT * FROM tab1 WHERE pk = 'a' AND sk = 1)", "EXISTS can only be used in ExecuteTransaction write"),
    ]
    for statement, message in cases:
        with pytest.raises(ClientError) as exc:
            client.execute_statement(Statement=statement)
        status, code, said = error_of(exc)
        assert (status, code) == (400, "ValidationException"), statement
        assert said.startswith(message), (statement, said)
    with pytest.raises(ClientError) as exc:
        client.execute_statement(Statement="SELECT * FROM tab1.multi", ConsistentRead=True)
    assert error_of(exc)[2].startswith("PartiQL statements cannot be executed")
    assert client.execute_statement(Statement="SELECT sk FROM tab1 WHERE pk = 'a' ORDER BY pk")["Items"] == [
        {"sk": {"N": "1"}}
    ]


# -- issue 34: what the service's PartiQL takes and refuses, over HTTP ---------------------------------------------
_ROW = {"pk": {"S": "a"}, "sk": {"N": "1"}, "s": {"S": "hello"}, "n": {"N": "3"}, "b": {"BOOL": True}}


@pytest.mark.parametrize(
    ("where", "found"),
    [
        ("attribute_exists(s)", True),
        ("attribute_exists(zz)", False),
        ("attribute_not_exists(zz)", True),
        ("attribute_not_exists(s)", False),
        ("begins_with(s, 'he')", True),
        ("contains(s, 'ell')", True),
        ("size(s) = 5", True),
        ("attribute_type(n, 'N')", True),
        ("zz IS MISSING", True),
        ("s IS NOT MISSING", True),
        ("zz IS NULL", True),
        ("s IS NOT NULL", True),
        ("b IS BOOL", True),
        ("b IS BOOLEAN", True),
        ("s IS STRING", True),
        ("n IS NUMBER", True),
        ("n IS NOT NUMBER", False),
        ("zz IS NOT STRING", True),
        ("s IS MAP", False),
    ],
)
def test_where_functions_and_type_tests(endpoint: Any, client: Any, where: str, found: bool) -> None:
    create_table(client)
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": _ROW}) == (200, {})
    status, body = wire(endpoint, "ExecuteStatement", {"Statement": f"SELECT * FROM tab1 WHERE pk = 'a' AND {where}"})
    assert (status, body) == (200, {"Items": [_ROW] if found else []})


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT * FROM tab1 -- the table\nWHERE pk = 'a'",
        "SELECT * /* every attribute */ FROM tab1 WHERE pk = 'a' -- and nothing after",
        "/* a\nlong comment */ SELECT * FROM tab1 WHERE /**/ pk = 'a'",
    ],
)
def test_comments(endpoint: Any, client: Any, statement: str) -> None:
    create_table(client)
    assert wire(endpoint, "PutItem", {"TableName": "tab1", "Item": _ROW}) == (200, {})
    assert wire(endpoint, "ExecuteStatement", {"Statement": statement}) == (200, {"Items": [_ROW]})


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT s AS x FROM tab1 WHERE pk = 'a'",
        "SELECT * FROM tab1 AS t WHERE pk = 'a'",
        "SELECT n, s as x FROM tab1",
        "UPDATE \"tab1\" AS t SET n = 1 WHERE pk = 'a' AND sk = 1",
    ],
)
def test_aliasing_is_not_supported(endpoint: Any, client: Any, statement: str) -> None:
    create_table(client)
    assert wire(endpoint, "ExecuteStatement", {"Statement": statement}) == (
        400,
        {"__type": "com.amazon.coral.validate#ValidationException", "message": "Aliasing is not supported"},
    )


def test_a_write_only_transaction_answers_empty_responses(endpoint: Any, client: Any) -> None:
    create_table(client)
    statements = [
        {"Statement": "INSERT INTO tab1 VALUE {'pk': 'q', 'sk': 1}"},
        {"Statement": "INSERT INTO tab1 VALUE {'pk': 'r', 'sk': 1}"},
    ]
    assert wire(endpoint, "ExecuteTransaction", {"TransactStatements": statements}) == (200, {"Responses": []})
