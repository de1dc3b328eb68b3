"""Structure-aware requests for the local endpoint, generated from botocore's DynamoDB service model.

Every request is well-typed for its operation's input shape (the model's structures, lists, maps, enums, integer
ranges and AttributeValues), with random shapes, sizes and values. Members that name things the endpoint holds
(tables, indexes, keys, expressions) are drawn mostly from what exists and sometimes at random, so requests get
past the first checks and reach the handlers. A batch is a pure function of its seed: the stream does not depend on
the answers, so a seed that failed can be replayed alone (see tests/integration/local/test_fuzz.py).
"""

from __future__ import annotations

import base64
import random
import string
from functools import cache
from typing import Any

TABLES = {  # name -> (hash, hash type, range, range type); the batch's fixture tables
    "fz_hash": ("pk", "S", None, None),
    "fz_range": ("pk", "S", "sk", "N"),
    "fz_bin": ("pk", "B", "sk", "S"),
}
INDEXES = {"fz_range": ["byg", "lsi"], "fz_bin": ["multi"]}
NAMES = ["pk", "sk", "g", "a", "b", "c", "list", "map", "n", "size", "name", "x.y", "#", "a b", "a", "b", "c"]
EXPR_NAMES = [f"#n{i}" for i in range(3)]
EXPR_VALUES = [f":v{i}" for i in range(4)]
COMPARATORS = ["=", "<>", "<", "<=", ">", ">="]
FUNCTIONS_1 = ["attribute_exists", "attribute_not_exists"]
FUNCTIONS_2 = ["attribute_type", "begins_with", "contains"]
NUMBERS = ["0", "1", "-1", "007", "1e3", ".5", "1.50", "-0", "1e125", "1e-130", "9" * 38, "1e126", "abc", " 1", "1e"]
INTEGERS = [0, 1, 2, 3, 10, 25, 100, 101, 1000, -1, 2**31 - 1, 2**31, 1.5]
LEGACY = frozenset(
    (
        "AttributeUpdates",
        "Expected",
        "KeyConditions",
        "QueryFilter",
        "ScanFilter",
        "AttributesToGet",
        "ConditionalOperator",
    )
)
DATA_PLANE = ("PutItem", "GetItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchWriteItem", "BatchGetItem")
WEIGHTS = {
    **dict.fromkeys(DATA_PLANE, 12.0),
    "TransactWriteItems": 6.0,
    "TransactGetItems": 4.0,
    "ExecuteStatement": 6.0,
    "BatchExecuteStatement": 3.0,
    "ExecuteTransaction": 3.0,
    "UpdateTable": 2.0,
    "DeleteTable": 0.1,
}


@cache
def service_model() -> Any:
    """The installed botocore's DynamoDB model, loaded with botocore.loaders (data/dynamodb/*/service-2.json)."""
    import botocore.loaders
    import botocore.model

    loader = botocore.loaders.create_loader()
    return botocore.model.ServiceModel(loader.load_service_model("dynamodb", "service-2"), "dynamodb")


def fixture_requests() -> list[tuple[str, dict[str, Any]]]:
    """CreateTable requests for the batch's fixture tables (with a GSI, an LSI and a multi-attribute GSI)."""
    out = []
    for name, (hk, ht, rk, rt) in TABLES.items():
        schema = [{"AttributeName": hk, "KeyType": "HASH"}]
        defs = {hk: ht}
        if rk and rt:
            schema.append({"AttributeName": rk, "KeyType": "RANGE"})
            defs[rk] = rt
        req: dict[str, Any] = {"TableName": name, "KeySchema": schema, "BillingMode": "PAY_PER_REQUEST"}
        if name == "fz_range":
            defs["g"] = "S"
            req["GlobalSecondaryIndexes"] = [_index("byg", [("g", "HASH")])]
            req["LocalSecondaryIndexes"] = [_index("lsi", [("pk", "HASH"), ("g", "RANGE")], "KEYS_ONLY")]
        if name == "fz_bin":
            defs.update(g="S", n="N")
            req["GlobalSecondaryIndexes"] = [_index("multi", [("g", "HASH"), ("n", "HASH"), ("sk", "RANGE")])]
        req["AttributeDefinitions"] = [{"AttributeName": a, "AttributeType": t} for a, t in defs.items()]
        out.append(("CreateTable", req))
    return out


def _index(name: str, keys: list[tuple[str, str]], projection: str = "ALL") -> dict[str, Any]:
    return {
        "IndexName": name,
        "KeySchema": [{"AttributeName": a, "KeyType": k} for a, k in keys],
        "Projection": {"ProjectionType": projection},
    }


class Generator:
    """Random requests of the operations in `operations`, drawn with `random.Random(seed)`."""

    def __init__(self, seed: int, operations: list[str], region: str = "us-east-1") -> None:
        self.rng = random.Random(seed)
        self.model = service_model()
        self.operations = sorted(operations)
        # the data plane most of the time; a table deleted early would leave little for the rest of the batch
        self.weights = [WEIGHTS.get(op, 1.0) for op in self.operations]
        self.region = region
        self.current = "fz_range"

    def request(self) -> tuple[str, dict[str, Any]]:
        (op,) = self.rng.choices(self.operations, self.weights)
        shape = self.model.operation_model(op).input_shape
        req = self.structure(shape, depth=0, required_bias=0.95)
        return op, req

    # ------------------------------------------------------------------ shapes
    def value(self, shape: Any, member: str, depth: int) -> Any:
        special = self.special(member, depth)
        if special is not None:
            return special
        if shape.name == "AttributeValue":
            return self.attribute_value(depth)
        kind = shape.type_name
        if kind == "structure":
            return self.structure(shape, depth + 1)
        if kind == "list":
            n = self.size()
            return [self.value(shape.member, member, depth + 1) for _ in range(n)]
        if kind == "map":
            return {
                self.map_key(shape.key, member): self.value(shape.value, member, depth + 1) for _ in range(self.size())
            }
        if kind == "string":
            enum = shape.enum
            if enum and self.rng.random() < 0.9:
                return self.rng.choice(enum)
            return self.text()
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind in ("integer", "long"):
            return self.rng.choice(INTEGERS)
        if kind in ("double", "float", "timestamp"):
            return self.rng.choice([0, 1.5, -1, 1e9])
        if kind == "blob":
            return base64.b64encode(self.rng.randbytes(self.rng.randrange(0, 12))).decode()
        return None

    def structure(self, shape: Any, depth: int, required_bias: float = 0.8) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if depth > 6:
            return out
        required = set(shape.required_members)
        # TableName first: the key and item members then follow that table's schema
        for name, member in sorted(shape.members.items(), key=lambda nm: nm[0] != "TableName"):
            keep = required_bias if name in required else 0.05 if name in LEGACY else 0.35
            if self.rng.random() < keep:
                out[name] = self.value(member, name, depth)
        return out

    def size(self) -> int:
        r = self.rng.random()
        return 0 if r < 0.1 else 1 if r < 0.5 else self.rng.randrange(2, 5) if r < 0.95 else self.rng.randrange(5, 30)

    def text(self) -> str:
        r = self.rng.random()
        if r < 0.01:
            return ""
        if r < 0.5:
            return self.rng.choice(NAMES)
        if r < 0.9:
            return "".join(self.rng.choice(string.printable) for _ in range(self.rng.randrange(0, 12)))
        return self.rng.choice(string.ascii_letters) * self.rng.choice([255, 256, 1025, 4097])

    def map_key(self, key_shape: Any, member: str) -> str:
        if member in ("RequestItems",):
            return self.table_name()
        if key_shape.name == "ExpressionAttributeNameVariable":
            return self.rng.choice([*EXPR_NAMES, "n0", "#"])
        if key_shape.name == "ExpressionAttributeValueVariable":
            return self.rng.choice([*EXPR_VALUES, "v0", ":"])
        return self.rng.choice(NAMES)

    # ------------------------------------------------------------------ values
    def attribute_value(self, depth: int) -> dict[str, Any]:
        kinds = ["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"]
        kind = self.rng.choice(kinds if depth < 5 else kinds[:8])
        if kind == "S":
            return {"S": self.text()}
        if kind == "N":
            return {"N": self.number()}
        if kind == "B":
            return {"B": self.binary()}
        if kind == "BOOL":
            return {"BOOL": self.rng.random() < 0.5}
        if kind == "NULL":
            return {"NULL": self.rng.random() < 0.95}
        if kind == "SS":
            return {"SS": [self.text() for _ in range(self.size())]}
        if kind == "NS":
            return {"NS": [self.number() for _ in range(self.size())]}
        if kind == "BS":
            return {"BS": [self.binary() for _ in range(self.size())]}
        if kind == "L":
            return {"L": [self.attribute_value(depth + 1) for _ in range(self.size())]}
        return {"M": {self.rng.choice(NAMES): self.attribute_value(depth + 1) for _ in range(self.size())}}

    def number(self) -> str:
        if self.rng.random() < 0.7:
            return str(self.rng.choice([self.rng.randrange(-100, 100), self.rng.random() * 1000]))
        return self.rng.choice(NUMBERS)

    def binary(self) -> str:
        good = base64.b64encode(self.rng.randbytes(self.rng.randrange(0, 10))).decode()
        return good if self.rng.random() < 0.8 else self.rng.choice(["YWJj??!!", "+/+=", "=+/=", "Y", good[:-1]])

    # ------------------------------------------------------------------ members that name what exists
    def table_name(self) -> str:
        """A table name, remembered: the keys and items generated next follow its schema."""
        r = self.rng.random()
        if r < 0.85:
            self.current = self.rng.choice(list(TABLES))
        elif r < 0.95:
            self.current = f"fz_new{self.rng.randrange(3)}"
        else:
            self.current = self.rng.choice(["", "a", "bad table!", "x" * 256, f"arn:aws:dynamodb:{self.region}:0:t"])
        return self.current

    def key(self) -> dict[str, Any]:
        t = self.current if self.rng.random() < 0.9 else self.rng.choice(list(TABLES))
        hk, ht, rk, rt = TABLES.get(t, ("pk", "S", None, None))
        out = {hk: self.scalar(ht)}
        if rk and rt:
            out[rk] = self.scalar(rt)
        if self.rng.random() < 0.1:
            out[self.rng.choice(NAMES)] = self.attribute_value(1)
        return out

    def scalar(self, kind: str) -> dict[str, Any]:
        if self.rng.random() < 0.05:
            return self.attribute_value(1)
        if kind == "S":
            return {"S": self.rng.choice(["a", "b", "c", "k1", "k2", ""])}
        if kind == "N":
            return {"N": self.rng.choice(["1", "2", "3", "1.0", "1e0", "10"])}
        return {"B": self.rng.choice(["YQ==", "Yg==", "AA==", ""])}

    def item(self) -> dict[str, Any]:
        item = self.key()
        for _ in range(self.size()):
            name = self.rng.choice(NAMES)
            item[name] = self.rng.choice([{"S": "x"}, {"N": "1"}]) if name in ("g", "n") else self.attribute_value(1)
        return item

    def path(self) -> str:
        r = self.rng.random()
        base = self.rng.choice(EXPR_NAMES) if r < 0.4 else self.rng.choice(["a", "b", "c", "g", "list", "map", "pk"])
        for _ in range(self.rng.choice([0, 0, 0, 1, 2])):
            base += self.rng.choice([".b", "[0]", "[3]", ".#n1", "[99999999999]"])
        return base

    def operand(self) -> str:
        r = self.rng.random()
        if r < 0.45:
            return self.path()
        if r < 0.9:
            return self.rng.choice(EXPR_VALUES)
        return f"size({self.path()})"

    def condition(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 3 or r < 0.35:
            return f"{self.operand()} {self.rng.choice(COMPARATORS)} {self.operand()}"
        if r < 0.45:
            return f"{self.operand()} BETWEEN {self.operand()} AND {self.operand()}"
        if r < 0.52:
            return f"{self.operand()} IN ({', '.join(self.operand() for _ in range(self.rng.randrange(0, 4)))})"
        if r < 0.62:
            return f"{self.rng.choice(FUNCTIONS_1)}({self.path()})"
        if r < 0.72:
            return f"{self.rng.choice(FUNCTIONS_2)}({self.operand()}, {self.operand()})"
        if r < 0.8:
            return f"NOT {self.condition(depth + 1)}"
        if r < 0.86:
            return f"({self.condition(depth + 1)})"
        return f"{self.condition(depth + 1)} {self.rng.choice(['AND', 'OR'])} {self.condition(depth + 1)}"

    def update(self) -> str:
        clauses = []
        for verb in self.rng.sample(["SET", "REMOVE", "ADD", "DELETE"], self.rng.randrange(1, 4)):
            if verb == "SET":
                value = self.rng.choice(
                    [
                        self.operand(),
                        f"{self.operand()} + {self.operand()}",
                        f"{self.operand()} - {self.operand()}",
                        f"if_not_exists({self.path()}, {self.operand()})",
                        f"list_append({self.operand()}, {self.operand()})",
                    ]
                )
                clauses.append(f"SET {self.path()} = {value}")
            elif verb == "REMOVE":
                clauses.append("REMOVE " + ", ".join(self.path() for _ in range(self.rng.randrange(1, 3))))
            else:
                clauses.append(f"{verb} {self.path()} {self.rng.choice(EXPR_VALUES)}")
        return " ".join(clauses)

    def key_condition(self) -> str:
        hk = self.rng.choice(["pk", "#n0", "g"])
        cond = f"{hk} = {self.rng.choice(EXPR_VALUES)}"
        r = self.rng.random()
        if r < 0.6:
            sk = self.rng.choice(["sk", "#n1", "n", "a"])
            cond += " AND " + self.rng.choice(
                [
                    f"{sk} {self.rng.choice(COMPARATORS[:1] + COMPARATORS[2:])} {self.rng.choice(EXPR_VALUES)}",
                    f"begins_with({sk}, {self.rng.choice(EXPR_VALUES)})",
                    f"{sk} BETWEEN {self.rng.choice(EXPR_VALUES)} AND {self.rng.choice(EXPR_VALUES)}",
                ]
            )
        return cond

    def statement(self) -> str:
        t = self.rng.choice([*TABLES, "fz_range.byg", "nope"])
        forms = [
            f'SELECT * FROM "{t}" WHERE pk = ?',
            f'SELECT a, b FROM "{t}" WHERE pk = ? AND sk > ?',
            f"INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?, 'a': ?}}",
            f'UPDATE "{t}" SET a = ? WHERE pk = ? AND sk = ?',
            f'DELETE FROM "{t}" WHERE pk = ? AND sk = ?',
            f'SELECT * FROM "{t}" WHERE begins_with(pk, ?) OR a IN [?, ?]',
        ]
        return self.mutate(self.rng.choice(forms))

    def mutate(self, text: str) -> str:
        """Mostly the text; sometimes with a character inserted, dropped or replaced."""
        if not text or self.rng.random() < 0.75:
            return text
        i = self.rng.randrange(len(text))
        c = self.rng.choice(string.printable)
        return self.rng.choice([text[:i] + c + text[i:], text[:i] + text[i + 1 :], text[:i] + c + text[i + 1 :]])

    def special(self, member: str, depth: int) -> Any:
        """Values for the members that name tables, keys, items and expressions; None: draw from the shape."""
        if self.rng.random() < 0.1:
            return None  # now and then any well-typed value, even for these
        if member in ("TableName", "ExclusiveStartTableName"):
            return self.table_name()
        if member in ("ResourceArn", "TableArn"):
            return f"arn:aws:dynamodb:{self.region}:000000000000:table/{self.table_name()}"
        if member == "IndexName":
            return self.rng.choice(["byg", "lsi", "multi", "nope"])
        if member in ("Key", "ExclusiveStartKey"):
            return self.key()
        if member == "Item":
            return self.item()
        if member in ("ConditionExpression", "FilterExpression"):
            return self.mutate(self.condition())
        if member == "KeyConditionExpression":
            return self.mutate(self.key_condition())
        if member == "UpdateExpression":
            return self.mutate(self.update())
        if member == "ProjectionExpression":
            return self.mutate(", ".join(self.path() for _ in range(self.rng.randrange(1, 4))))
        if member == "ExpressionAttributeNames":
            names = self.rng.sample(EXPR_NAMES, self.rng.randrange(0, len(EXPR_NAMES) + 1))
            return {n: self.rng.choice(NAMES) for n in names}
        if member == "ExpressionAttributeValues":
            values = self.rng.sample(EXPR_VALUES, self.rng.randrange(0, len(EXPR_VALUES) + 1))
            return {v: self.attribute_value(1) for v in values}
        if member == "Statement":
            return self.statement()
        if member == "Parameters":
            return [self.attribute_value(1) for _ in range(self.rng.randrange(0, 4))]
        if member == "AttributeDefinitions":
            names = self.rng.sample(["pk", "sk", "g", "n", "h"], self.rng.randrange(1, 4))
            kinds = ["S", "N", "B", "S", "N", "B", "BOGUS", None]  # None: a definition without AttributeType
            defs = [{"AttributeName": n, "AttributeType": self.rng.choice(kinds)} for n in names]
            return [{k: v for k, v in d.items() if v is not None} for d in defs]
        if member in ("Keys",) and depth > 0:
            return [self.key() for _ in range(self.size())]
        return None


# ---- issue 41: PartiQL from its grammar, and updates that grow an item -------------------------------------------
GROWTH_KEYS = [{"pk": {"S": k}} for k in ("g1", "g2", "g3")]  # items of fz_hash that the growing updates work on
PARTIQL_KEYS = ("a", "b", "c", "g1", "g2", "g3")
PARTIQL_NUMBERS = ["1", "-2", "3.5", "1e3", "1e125", "1e126", "1e-130", "1e9223372036854775808", "9" * 39, "007"]
DEEP = (33, 40, 101, 200, 1000)  # nesting depths past the service's and the parsers' bounds


class GrammarGenerator:
    """PartiQL statements drawn from the grammar the endpoint implements (SELECT, INSERT, UPDATE, DELETE, EXISTS;
    conditions, paths, literals, bags, parameters), nesting and sizes included, and UpdateItems that grow the
    items of GROWTH_KEYS in depth and size. A pure function of its seed, like Generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.params = 0

    def request(self) -> tuple[str, dict[str, Any]]:
        r = self.rng.random()
        if r < 0.35:
            return "UpdateItem", self.growth()
        if r < 0.75:
            req: dict[str, Any] = {"Statement": self.statement()}
            req.update(self.parameters())
            return "ExecuteStatement", req
        statements = []
        for _ in range(self.rng.randrange(1, 5)):
            one: dict[str, Any] = {"Statement": self.statement(exists=r >= 0.9)}
            one.update(self.parameters())
            statements.append(one)
        if r < 0.9:
            return "BatchExecuteStatement", {"Statements": statements}
        return "ExecuteTransaction", {"TransactStatements": statements}

    def parameters(self) -> dict[str, Any]:
        n, self.params = self.params, 0
        if self.rng.random() < 0.05:
            n += self.rng.choice([-1, 1])  # a count that does not match
        if n <= 0:
            return {}
        return {"Parameters": [self.attribute_value(self.rng.randrange(1, 4)) for _ in range(n)]}

    # ---- statements
    def statement(self, exists: bool = False) -> str:
        self.params = 0
        table = self.rng.choice(["fz_hash", "fz_range", '"fz_range"."byg"', "fz_range.lsi", "nope_t"])
        kind = self.rng.choice(["SELECT", "SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS" if exists else "SELECT"])
        if kind == "SELECT":
            projection = (
                "*" if self.rng.random() < 0.4 else ", ".join(self.path() for _ in range(self.rng.randrange(1, 4)))
            )
            text = f"SELECT {projection} FROM {table}"
            if self.rng.random() < 0.9:
                text += f" WHERE {self.key_condition()}"
                if self.rng.random() < 0.5:
                    text += f" AND {self.condition(0)}"
            if self.rng.random() < 0.1:
                text += f" ORDER BY {self.rng.choice(['pk', 'sk', 'g'])} {self.rng.choice(['ASC', 'DESC', ''])}"
        elif kind == "INSERT":
            text = f"INSERT INTO {table} VALUE {self.item_literal()}"
        elif kind == "UPDATE":
            actions = []
            for _ in range(self.rng.randrange(1, 4)):
                if self.rng.random() < 0.75:
                    actions.append(f"SET {self.path()} = {self.operand(0)}")
                else:
                    actions.append(f"REMOVE {self.path()}")
            text = f"UPDATE {table} {' '.join(actions)} WHERE {self.key_condition()}"
            text += self.rng.choice(["", "", " RETURNING ALL NEW *", " RETURNING MODIFIED OLD *"])
        elif kind == "DELETE":
            text = f"DELETE FROM {table} WHERE {self.key_condition()}"
            text += self.rng.choice(["", "", " RETURNING ALL OLD *"])
        else:
            text = f"EXISTS(SELECT * FROM {table} WHERE {self.key_condition()} AND {self.condition(0)})"
        return text

    def key_condition(self) -> str:
        cond = f"pk = {self.scalar_literal(self.rng.choice(PARTIQL_KEYS))}"
        if self.rng.random() < 0.6:
            cond += f" AND sk = {self.rng.choice(['1', '2', '3', '?'])}"
            self.params += cond.endswith("?")
        return cond

    def condition(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.02:  # nesting past the parser's bound, or just within it
            d = self.rng.choice((*DEEP, 50, 100))
            return self.rng.choice(["(" * d + self.condition(99) + ")" * d, "NOT " * d + self.condition(99)])
        if depth > 3 or r < 0.35:
            return f"{self.operand(depth)} {self.rng.choice([*COMPARATORS, '!='])} {self.operand(depth)}"
        if r < 0.42:
            return f"{self.operand(depth)} BETWEEN {self.operand(depth)} AND {self.operand(depth)}"
        if r < 0.49:
            options = ", ".join(self.operand(depth) for _ in range(self.rng.randrange(1, 5)))
            return f"{self.operand(depth)} IN [{options}]"
        if r < 0.55:
            what = self.rng.choice(["MISSING", "NULL", "STRING", "NUMBER", "LIST", "MAP", "BOOLEAN", "BLOB", "bogus"])
            return f"{self.path()} IS {self.rng.choice(['', 'NOT '])}{what}"
        if r < 0.62:
            fn = self.rng.choice(["begins_with", "contains", "attribute_type", "attribute_exists", "missing"])
            args = [self.path()] + [self.operand(depth) for _ in range(self.rng.randrange(0, 2))]
            return f"{fn}({', '.join(args)})"
        if r < 0.7:
            return f"NOT {self.condition(depth + 1)}"
        if r < 0.78:
            return f"({self.condition(depth + 1)})"
        return f"{self.condition(depth + 1)} {self.rng.choice(['AND', 'OR'])} {self.condition(depth + 1)}"

    def operand(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.path()
        if r < 0.5:
            self.params += 1
            return "?"
        if r < 0.58:
            fn = self.rng.choice(["size", "list_append", "if_not_exists", "set_add", "nope"])
            if self.rng.random() < 0.05:
                d = self.rng.choice(DEEP)
                return f"{fn}(" * d + self.path() + ")" * d
            return f"{fn}({self.path()}, {self.literal(1)})"
        if r < 0.65 and depth < 3:
            return f"{self.operand(depth + 1)} {self.rng.choice(['+', '-'])} {self.operand(depth + 1)}"
        return self.literal(1)

    def path(self) -> str:
        out = self.rng.choice(["a", "b", "n", "list", "map", '"quoted name"', "pk", "sk", "g", "size"])
        for _ in range(self.rng.choice([0, 0, 1, 2, 5, 40])):
            out += self.rng.choice([".x", "[0]", "[2]", "['k']", ".inner", "[99999999999]"])
        return out

    # ---- literals
    def literal(self, level: int) -> str:
        r = self.rng.random()
        if r < 0.03:  # a container nested past the service's 32 levels (or the parser's recursion)
            d = self.rng.choice(DEEP)
            return self.rng.choice(["[" * d + "]" * d, "{'x':" * d + "1" + "}" * d])
        if r < 0.5 or level > 6:
            return self.scalar_literal()
        if r < 0.65:
            return "[" + ", ".join(self.literal(level + 1) for _ in range(self.rng.randrange(0, 4))) + "]"
        if r < 0.85:
            members = (
                f"'{self.rng.choice(NAMES)}': {self.literal(level + 1)}" for _ in range(self.rng.randrange(0, 4))
            )
            return "{" + ", ".join(members) + "}"
        kind = self.rng.choice(["'s'", "1"])
        return (
            "<<"
            + ", ".join(kind.replace("1", self.rng.choice(PARTIQL_NUMBERS)) for _ in range(self.rng.randrange(0, 4)))
            + ">>"
        )

    def scalar_literal(self, text: str | None = None) -> str:
        if text is not None and self.rng.random() < 0.9:
            return f"'{text}'"
        r = self.rng.random()
        if r < 0.1:
            self.params += 1
            return "?"
        if r < 0.4:
            return self.rng.choice(PARTIQL_NUMBERS)
        if r < 0.5:
            return self.rng.choice(["TRUE", "FALSE", "NULL", "MISSING"])
        if r < 0.52:
            return "'" + "s" * self.rng.choice([1000, 4000, 8200]) + "'"  # sizes up to past the 8 KB statement
        return "'" + self.rng.choice(["x", "a''b", "", "ü", "k1"]) + "'"

    def item_literal(self) -> str:
        members = [f"'pk': {self.scalar_literal(self.rng.choice(PARTIQL_KEYS))}"]
        if self.rng.random() < 0.6:
            members.append(f"'sk': {self.rng.choice(['1', '2', '?', 'x'])}")
            self.params += members[-1].endswith("?")
        for _ in range(self.rng.randrange(0, 5)):
            members.append(f"'{self.rng.choice(NAMES)}': {self.literal(1)}")
        return "{" + ", ".join(members) + "}"

    def attribute_value(self, depth: int) -> dict[str, Any]:
        r = self.rng.random()
        if r < 0.4:
            return {"S": self.rng.choice(PARTIQL_KEYS)}
        if r < 0.7:
            return {"N": self.rng.choice(PARTIQL_NUMBERS)}
        return nested_map(depth)

    # ---- UpdateItems that grow an item
    def growth(self) -> dict[str, Any]:
        """SET a.x.x... = :deep (a path `p` deep, a value `v` deep: 31 < p + v for some), or list_append of a large
        list (the item grows to the 400 KB limit), on one of GROWTH_KEYS; the answer asked for varies."""
        req: dict[str, Any] = {"TableName": "fz_hash", "Key": self.rng.choice(GROWTH_KEYS)}
        if self.rng.random() < 0.3:
            req["UpdateExpression"] = "SET l = list_append(if_not_exists(l, :empty), :big) ADD n :one"
            chunk = "s" * self.rng.choice([1000, 30_000, 100_000])
            req["ExpressionAttributeValues"] = {
                ":empty": {"L": []},
                ":big": {"L": [{"S": chunk}] * self.rng.randrange(1, 4)},
                ":one": {"N": "1"},
            }
        else:
            depth = self.rng.choice([1, 2, 8, 16, 20, 24, 31, 32])
            path = ".".join(["a"] + ["x"] * self.rng.randrange(0, 33 - min(depth, 32) + 3))
            req["UpdateExpression"] = f"SET {path} = :deep ADD n :one"
            req["ExpressionAttributeValues"] = {":deep": nested_map(depth), ":one": {"N": "1"}}
        req["ReturnValues"] = self.rng.choice(["NONE", "ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD"])
        if self.rng.random() < 0.2:
            req["ConditionExpression"] = "attribute_not_exists(pk)"
            req["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
        return req


def nested_map(levels: int) -> dict[str, Any]:
    """A map `levels` deep (its own level counted), each level's member named x, a number at the bottom."""
    av: dict[str, Any] = {"N": "1"}
    for _ in range(levels - 1):
        av = {"M": {"x": av}}
    return av


def reads_of_grown_items() -> list[tuple[str, dict[str, Any]]]:
    """Every read that answered 500 on an over-deep item, of each item the growing updates worked on."""
    out: list[tuple[str, dict[str, Any]]] = []
    for key in GROWTH_KEYS:
        pk = key["pk"]["S"]
        out += [
            ("GetItem", {"TableName": "fz_hash", "Key": key, "ProjectionExpression": "a, l, n"}),
            ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "fz_hash", "Key": key}}]}),
            ("ExecuteStatement", {"Statement": f"SELECT a FROM fz_hash WHERE pk = '{pk}'"}),
            ("ExecuteTransaction", {"TransactStatements": [{"Statement": f"SELECT a FROM fz_hash WHERE pk = '{pk}'"}]}),
            (
                "UpdateItem",
                {"TableName": "fz_hash", "Key": key, "UpdateExpression": "SET b = a", "ReturnValues": "ALL_NEW"},
            ),
            (
                "UpdateItem",
                {"TableName": "fz_hash", "Key": key, "UpdateExpression": "REMOVE b", "ReturnValues": "ALL_OLD"},
            ),
        ]
    return out
