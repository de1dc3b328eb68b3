"""DynamoDB's expression language for the local endpoint: conditions, filters, updates, projections, key conditions.

Each expression is parsed once into an immutable object whose evaluation is a tree of closures, so the server can
cache parsed expressions (keyed by expression, names and values) and evaluate them per item without re-parsing.
Error messages follow the service's ValidationException wording so clients see what DynamoDB would say.

The phases, and the value that crosses each (the types are in paths: `Path`, `Getter`, `Pred`):

    expression text
      -> lexer.tokenize ........ list[Token] (kind, text, position; a bare reserved word refused here)
      -> parser.Parser ......... a cursor over the tokens: `#name`/`:value` placeholders resolved and recorded,
                                 document paths read as Path, operands as Operand (a Getter and, for a value, its AV)
      -> grammar ............... parses and compiles in one pass: each operator becomes a closure built by
                                 evaluate (conditions: a Pred) or update_ops (update operands: a Getter)
      -> conditions / updates / projection / keys
                                 one module per expression kind, each returning its immutable object: Condition
                                 (a Pred and the names it used), Update (its clauses' Getters and paths), Projection
                                 (a trie of paths), KeyCondition (the key schema's parts and a range test)
      -> per item .............. Condition.evaluate(item) -> bool, Update.apply(item) -> a new item,
                                 Projection.apply(item) -> the projected item

A name shared between modules here is public within the package; `__all__` is what the rest of `local/` uses.
"""

from dynlocust.local.expressions.conditions import Condition, parse_condition
from dynlocust.local.expressions.errors import ExpressionError
from dynlocust.local.expressions.keys import (
    KeyCondition,
    MultiKeyCondition,
    parse_key_condition,
    parse_multi_key_condition,
)
from dynlocust.local.expressions.projection import Projection, parse_projection
from dynlocust.local.expressions.updates import Update, parse_update

__all__ = [
    "Condition",
    "ExpressionError",
    "KeyCondition",
    "MultiKeyCondition",
    "Projection",
    "Update",
    "parse_condition",
    "parse_key_condition",
    "parse_multi_key_condition",
    "parse_projection",
    "parse_update",
]
