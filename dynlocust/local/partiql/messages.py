"""PartiQL's limits and the service's wording of its refusals: one place, so one wording is used everywhere."""

from __future__ import annotations

from dynlocust.dynamodb import MAX_TRANSACT

STATEMENT_MAX = 8192  # "Length Constraints: Minimum length of 1. Maximum length of 8192." (API_ExecuteStatement)
BATCH_MAX = 25  # "a batch of up to 25 statements" (API_BatchExecuteStatement)
TRANSACTION_MAX = (
    MAX_TRANSACT  # TransactStatements "Array Members: Minimum number of 1 item. Maximum number of 100 items."
)

THROTTLE_CODES = frozenset(("ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"))
# The service's wording: DynamoDB's PartiQL validation messages (as DynamoDB Local ships them), the refusal of
# multi-attribute GSI keys as pinned against the service, and moto's aws_verified tests.
DUPLICATE = "Duplicate primary key exists in table"
KEY_EQUALITY = "Where clause does not contain a mandatory equality on all key attributes"
PARAMS_MISMATCH = "Number of parameters in request and statement don't match."
BATCH_SELECT_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
NO_INDEX = "The table does not have the specified index"
ON_INDEX = "This operation is not supported on an index"
STAR_AND_OTHERS = "Other attributes should not be present in the projection when '*' is used."
EXISTS_OUTSIDE = "EXISTS can only be used in ExecuteTransaction write requests."
ITEM_SYNTAX = (
    "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement."
)
MULTI_ATTRIBUTE_KEYS = (
    "PartiQL statements cannot be executed on tables with multi-attribute HASH keys or multi-attribute RANGE keys."
)
TABLE_NAME = "Table name should be within the length [3, 255] and only contain 'a-z', 'A-Z', '0-9', '-', '_', '.'."
CONSISTENT_GSI = "Strongly consistent read is not supported on Global Secondary Indexes"
TX_INDEX_READ = "Reads on indices are not supported within transactions."
TX_INDEX_CHECK = "Operations on indices are not supported in transactions"
TX_EXISTS_KEY = "EXISTS() must contain a single item read with additional condition"
ORDER_BY_WHERE = "Must have WHERE clause in the statement when using ORDER BY clause."
ORDER_BY_HASH = "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
TX_SELECT_KEY = "Select statements within ExecuteTransaction must specify the primary key in the where clause."
MALFORMED = "Statement wasn't well formed, can't be processed: "  # the detail after it is dynlocust's, but:
NOT_DML = "Expected data manipulation"  # a statement that is no SELECT/INSERT/UPDATE/DELETE (recorded, eu-west-2)
# the documentation states these rules without the service's wording; the sentences are dynlocust's
MIXED_BATCH = "A batch must consist of either read statements or write statements"
MIXED_TRANSACTION = "A transaction must consist of either read statements or write statements"
ALIASING = "Aliasing is not supported"
# "Global secondary index queries cannot fetch attributes from the parent table" (Developer Guide, Projections of
# global secondary indexes); every attribute the index lacks, in the statement's order (issue 45, and suites run
# against the service: "... Global secondary index status-index does not project [zdrop, adrop]")
NOT_PROJECTED = "One or more parameter values were invalid: Global secondary index {index} does not project [{names}]"
# The refusals of condition and set functions, pinned against the service by a public conformance suite (eu-west-2,
# 2026; us-east-1, eu-west-1 and us-west-2 gave the same strings). AT is the suffix some carry: the line and column
# (in characters, from 1) and the length of the token they name.
AT = " at {line}:{column}:{length}"
NEEDS_PATH = "Operator or function requires a document path; operator or function: {name}"
OPERAND_COUNT = (
    "Incorrect number of operands for operator or function; operator or function: {name}, number of operands: {count}"
)
# a function call in a SELECT's projection, at its name (COUNT's too, at 5 characters, as a public emulator records
# it captured from the service, eu-west-2, 2026)
PATH_COMPONENT = "Unexpected path component"
UNRECOGNIZED_FUNCTION = "Unrecognized function: {name}"  # at the name, which the message writes lower-cased
DOT_COMPONENT = "Invalid path dot component"  # after MALFORMED: a reserved word after a path's '.', e.g. m.inner
UNSUPPORTED_TYPE = "Unsupported data type: {what} under key {key}"  # a function in a literal value, at its name
SET_ARGUMENTS = "{function} must have exactly two arguments"  # at the function's name
SET_FIRST = "The first argument to {function} must equal the assignment value"  # at the function's name
SET_SECOND = "The second argument to {function} must be a value with type SET"  # at the FIRST argument
EMPTY_BAG = "Empty bags are not supported"
# after MALFORMED: parentheses, NOTs and function calls nested past the parser's bound (dynlocust's wording and bound:
# the service's limit is not documented; its 8 KB statement bounds the nesting, see limits.MAX_EXPRESSION_NESTING)
TOO_DEEP = "parentheses, NOT operators and function calls are nested more than {limit} deep"
# as pinned there too: BATCH_SELECT_KEY, TX_SELECT_KEY and TX_EXISTS_KEY above, a transaction's prefixed by this
IN_TRANSACTION = "Validation failed in TransactStatements[{index}]: {message}"
