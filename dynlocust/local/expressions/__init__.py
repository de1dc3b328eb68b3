"""DynamoDB's expression language for the local endpoint: conditions, filters, updates, projections, key conditions.

Each expression is parsed once into an immutable object whose evaluation is a tree of closures, so the server can
cache parsed expressions (keyed by expression, names and values) and evaluate them per item without re-parsing.
The package follows the phases: lexer (tokens), parser and grammar (parse and compile), evaluate and update_ops
(closures run per item), and one module per expression kind (conditions, updates, projection, keys).
Error messages follow the service's ValidationException wording so clients see what DynamoDB would say.
"""

from dynlocust.local.attrvalues import compare_values, item_size
from dynlocust.local.expressions.conditions import Condition, parse_condition
from dynlocust.local.expressions.errors import ExpressionError
from dynlocust.local.expressions.keys import (
    KEY_SHAPES_MAX,
    KeyCondition,
    MultiKeyCondition,
    _key_shapes,
    parse_key_condition,
    parse_multi_key_condition,
)
from dynlocust.local.expressions.paths import _check_overlaps
from dynlocust.local.expressions.projection import Projection, parse_projection
from dynlocust.local.expressions.updates import Update, parse_update

__all__ = [
    "KEY_SHAPES_MAX",
    "Condition",
    "ExpressionError",
    "KeyCondition",
    "MultiKeyCondition",
    "Projection",
    "Update",
    "_check_overlaps",
    "_key_shapes",
    "compare_values",
    "item_size",
    "parse_condition",
    "parse_key_condition",
    "parse_multi_key_condition",
    "parse_projection",
    "parse_update",
]
