"""DynamoDB facts: the service's limits, the error codes that count as throttles, and the SigV4 basics.

One place per fact, so the scenario model, the mapper, the table seeding, the transports and the outcome classifier
cannot drift apart. Each fact names its source: the service's API reference or developer guide, as summarised in
the project's `shared/reference/dynamodb-facts.md` ("Errors on the wire", "Limits"). This module is the bottom
layer: it imports nothing of the project.
"""

from __future__ import annotations

import hashlib
import hmac

# "The maximum item size in DynamoDB is 400 KB, which includes both attribute name binary length (UTF-8 length) and
# attribute value lengths" (Developer Guide, Service, account, and table quotas: Items). 1 KB = 1,024 bytes.
MAX_ITEM_SIZE = 400 * 1024
# "A single call to BatchWriteItem can transmit up to 16MB of data over the network, consisting of up to 25 item
# put or delete operations" (API reference, BatchWriteItem).
MAX_BATCH_WRITE = 25
# "A single operation can retrieve up to 16 MB of data, which can contain as many as 100 items" (API reference,
# BatchGetItem).
MAX_BATCH_GET = 100
# The 16 MB of one BatchWriteItem request or one BatchGetItem response (the two quotes above).
MAX_BATCH_BYTES = 16 * 1024 * 1024
# "TransactWriteItems is a synchronous write operation that groups up to 100 action requests"; "the aggregate size
# of the items in the transaction cannot exceed 4 MB" (API reference, TransactWriteItems).
MAX_TRANSACT = 100
MAX_TRANSACT_BYTES = 4 * 1024 * 1024

NEW_TABLE_WRITE_UNITS = 4000
# The longest burst an on-demand limit lets through before it throttles, in seconds of that limit: a new table
# took 0.9 s of burst at 8,000 writes/s offered and 3.8 s at 5,000 against its 4,130/s ceiling (shared/reference/
# service-behaviour.md, "first throttle after a window above baseline starts"), i.e. 3,300-3,600 writes, 0.8-0.9 s
# of the ceiling; the per-partition and OnDemandThroughput limits allow 1 s (Developer Guide, burst and adaptive
# capacity). Our choice: 1 s, the largest of them, so no on-demand burst is longer than this figure assumes.
ON_DEMAND_BURST_S = 1.0
NEW_TABLE_READ_UNITS = 12000
"""A new on-demand table's own warm throughput, write and read units per second (DG "Understanding DynamoDB warm
throughput in different scenarios", warm-throughput-scenarios.html: it "starts with a warm throughput of 12,000
read units per second and 4,000 write units per second"; ../shared/reference/dynamodb-facts.md). The service
refuses a `WarmThroughput` below it."""

# Error codes (the part of `__type` after `#`, botocore's `Error.Code`) that mean "the service said no to the rate",
# and the `CancellationReasons[].Code` values that make a TransactionCanceledException a throttle
# (API reference, Common errors and TransactWriteItems; dynamodb-facts.md "Errors on the wire").
THROTTLE_CODES = frozenset({"ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"})
THROTTLE_CANCELLATION_CODES = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})

# Not the service's: the embedded endpoint's own word on why a shared on-demand budget refused a request (see
# docs/local-endpoint-capacity.md), sent beside the service's `throttlingReasons` and read by the outcome
# classifier. The header's value is `<cause>; write-load=<x>; read-load=<y>`. The service sends no such header,
# so against AWS nothing changes.
THROTTLE_CAUSE_HEADER = "x-dynlocust-throttle-cause"
CAUSE_WRITES = "writes-over-ceiling"
"""A read was refused: writes alone offer more than the ceiling of the one read-and-write budget."""
CAUSE_READS = "reads-over-ceiling"
"""A write was refused: reads alone offer more than the ceiling."""
CAUSE_MIX = "read-write-mix"
"""Neither kind alone is over the ceiling; together they are."""
THROTTLE_CAUSES = (CAUSE_WRITES, CAUSE_READS, CAUSE_MIX)

# The JSON 1.0 protocol's content type, which SigV4 signs for DynamoDB (dynamodb-facts.md "Client CPU").
JSON_CONTENT_TYPE = "application/x-amz-json-1.0"
# Signature Version 4 (IAM User Guide, "Create a signed AWS API request"): the algorithm name of the
# `Authorization` header and the credential scope's terminator.
SIGV4_ALGORITHM = "AWS4-HMAC-SHA256"
SIGV4_TERMINATOR = "aws4_request"


def derive_signing_key(secret_key: str, day: str, region: str, service: str) -> bytes:
    """SigV4's four-step HMAC-SHA256 chain (`day` is `YYYYMMDD`): the key both signer and verifier cache per day."""
    key = hmac.new(("AWS4" + secret_key).encode(), day.encode(), hashlib.sha256).digest()
    key = hmac.new(key, region.encode(), hashlib.sha256).digest()
    key = hmac.new(key, service.encode(), hashlib.sha256).digest()
    return hmac.new(key, SIGV4_TERMINATOR.encode(), hashlib.sha256).digest()
