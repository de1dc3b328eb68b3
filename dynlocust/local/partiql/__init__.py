"""PartiQL for the local endpoint: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.

Why a translation and not an evaluator: DynamoDB runs a PartiQL statement as the data-plane operation it
stands for (a SELECT with equality on the partition key is a Query, with IN one Query per value, any other
SELECT a Scan; INSERT a PutItem that refuses an existing key, UPDATE an UpdateItem on an existing item, DELETE a
DeleteItem; a batch or transaction the same per statement), so it reads, charges capacity and throttles
exactly as those do. Each statement is parsed here into an operation request with expression placeholders and
run through the Backend's own handlers: one code path for validation, capacity, throttling and
ConsumedCapacity. The parser is a small recursive descent over the subset DynamoDB
documents (ql-reference.*): paths, literals, `?` parameters, comparisons, BETWEEN, IN, IS [NOT] MISSING/NULL,
begins_with/contains/attribute_type/size, SET/REMOVE with list_append/set_add/set_delete, RETURNING.

The package follows the phases: lexer, conditions and parser (the syntax tree in ast), translate and requests
(statement -> operation request), operations (execution), responses (tokens and sums).
"""

from dynlocust.local.partiql.ast import Const, Name, Node, Statement
from dynlocust.local.partiql.operations import (
    PartiQL,
    batch_execute_statement,
    execute_statement,
    execute_transaction,
)
from dynlocust.local.partiql.parser import parse

__all__ = [
    "Const",
    "Name",
    "Node",
    "PartiQL",
    "Statement",
    "batch_execute_statement",
    "execute_statement",
    "execute_transaction",
    "parse",
]
