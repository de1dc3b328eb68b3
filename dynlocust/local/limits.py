"""The service's documented limits, in one place, each with the documentation's words beside it.

The local endpoint checks these before any costly work (parsing, evaluating, storing), so that no request can
make it do more than the real service would agree to do. Sources: the DynamoDB Developer Guide, "Service,
account, and table quotas", and the API reference of each operation.
"""

from __future__ import annotations

# ---- Hardening (issue 16): request, expression, nesting and connection limits ---------------------------------

#: "The maximum length of any expression string is 4 KB. For example, the size of the ConditionExpression a=b is
#: 3 bytes." (Developer Guide, quotas: expression parameters). Checked before the expression is parsed.
MAX_EXPRESSION_BYTES = 4 * 1024

#: "DynamoDB supports nested attributes up to 32 levels deep." (Developer Guide, quotas: attribute values).
#: A top-level attribute's value is level 1; a member of an M or L at level n is at level n + 1.
MAX_NESTING_LEVELS = 32

#: The service refuses an HTTP request body over 16 MB with HTTP 413 ("Request Entity Too Large"); 16 MB is also
#: "the total request size" limit of BatchWriteItem and BatchGetItem (API reference).
MAX_REQUEST_BYTES = 16 * 1024 * 1024

#: Not a documented limit: how deeply parentheses and function calls may nest in one expression. The service's
#: 4 KB cap bounds it at about 2,000; 100 keeps the recursive-descent parser far from Python's recursion limit.
MAX_EXPRESSION_NESTING = 100

#: Not a documented limit: the longest request head (request line and headers) the endpoint reads.
MAX_HEAD_BYTES = 64 * 1024
