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

The phases, and the value that crosses each:

    statement text and its `?` parameters
      -> lexer.Lexer ............ tokens read on demand from the text (a malformed token is refused here)
      -> parser, conditions ..... the syntax tree in ast: a Statement (its kind, table and index, projection, WHERE
                                  as Name/Const/Node, an INSERT's item, SET/REMOVE paths), parameters bound
      -> translate .............. the tree's WHERE and SETs written by Emit as DynamoDB expression text with
                                  #n/:v placeholders (the key's equalities and IN lists taken out first)
      -> requests.Requests ...... the statement and its table checked, as the request dict of the data-plane
                                  operation it stands for (PutItem, UpdateItem, DeleteItem, Query or Scan)
      -> operations.PartiQL ..... that request run through the Backend's own handlers; their responses combined
                                  with responses (NextToken, a batch statement's error code, summed
                                  ConsumedCapacity) into the ExecuteStatement / BatchExecuteStatement /
                                  ExecuteTransaction response dict

A name shared between modules here is public within the package; `__all__` is what the rest of `local/` uses
(the three operations) and what the parser's tests read (the tree).
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
