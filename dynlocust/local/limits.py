"""The service's documented limits, in one place, each with the documentation's words beside it.

The local endpoint checks these before any costly work (parsing, evaluating, storing), so that no request can
make it do more than the real service would agree to do. Sources: the DynamoDB Developer Guide, "Service,
account, and table quotas", and the API reference of each operation.
"""

from __future__ import annotations

from dynlocust.dynamodb import MAX_BATCH_GET, MAX_BATCH_WRITE, MAX_TRANSACT

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

# --- issue 15 (conformance): keys, indexes, batches, transactions ---------------------------------------------
# (quoted where the wording was checked against the Developer Guide's Constraints page; the rest paraphrase it)
# "The minimum length of a partition key value is 1 byte. The maximum length is 2048 bytes." (Developer Guide,
# Constraints, Partition key length)
HASH_KEY_MAX_BYTES = 2048
# "The minimum length of a sort key value is 1 byte. The maximum length is 1024 bytes." (Developer Guide,
# Constraints, Sort key length)
RANGE_KEY_MAX_BYTES = 1024
# "You can define up to 5 local secondary indexes per table." (Developer Guide, Secondary indexes)
LSI_MAX = 5
# "Each table in DynamoDB can have up to 20 global secondary indexes (default quota)." (Secondary indexes)
GSI_MAX = 20
# Multi-attribute keys: "each global secondary index can have up to four partition key attributes and up to four
# sort key attributes." (Developer Guide, Multi-attribute keys for global secondary indexes)
GSI_HASH_ATTRS_MAX = 4
GSI_RANGE_ATTRS_MAX = 4
# "TransactWriteItems is a synchronous write operation that groups up to 100 action requests."; the same for
# TransactGetItems. (API reference)
TRANSACT_ITEMS_MAX = MAX_TRANSACT
# "A single call to BatchWriteItem can transmit up to 16MB of data over the network, consisting of up to 25 item
# put or delete operations." (API reference, BatchWriteItem)
BATCH_WRITE_MAX = MAX_BATCH_WRITE
# "A single operation can retrieve up to 16 MB of data, which can contain as many as 100 items." (BatchGetItem)
BATCH_GET_MAX = MAX_BATCH_GET
# "new on-demand tables ... can instantly accommodate up to 4,000 write request units and 12,000 read request
# units" (Developer Guide, Warm throughput / on-demand initial throughput); a WarmThroughput below the table's
# provisioned units or below these on-demand defaults is refused.
DEFAULT_WARM = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000}
# --- end of issue 15 block ---------------------------------------------------------------------------------------
