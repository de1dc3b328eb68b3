"""The capacity model's figures, each with its source: the module docstring of `dynlocust.local.capacity` cites
the service's documentation and the shared reference measurement for every one, and says which choices are ours."""

from __future__ import annotations

ON_DEMAND = "PAY_PER_REQUEST"
PROVISIONED = "PROVISIONED"

BASE_WRITE = 4000.0
BASE_READ = 12000.0
HEADROOM = 4130.0 / 4000.0
BURST_S = 0.85
GROWTH_STEP = 0.25
FIRST_HOLD_S = 480.0
NEXT_HOLD_S = 600.0
GRACE_S = 60.0
BIN_S = 1.0
PEAK_WINDOW_S = 10.0
TABLE_QUOTA = 40000.0
PARTITION_WRITE = 1000.0
PARTITION_READ = 3000.0
PARTITION_BURST_S = 1.0
MAX_CAP_BURST_S = 1.0
PROVISIONED_CREDIT_S = 300.0
PROVISIONED_START_CREDIT_S = 1.0
PRUNE_ABOVE = 1024
# Floors under time scaling (module docstring). 0.08 s leaves the table burst at time_scale 10 as scaled (0.082 s).
MIN_TOLERANCE_S = 0.08
MIN_TOLERANCE_COSTS = 3.0
MIN_PEAK_WINDOW_S = 1.0
MIN_GRACE_S = 0.5
MIN_CAUSE_WINDOW_S = 1.0
GRACE_REFILLS = 100.0

ON_DEMAND_TABLE_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your "
    "table or index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
ON_DEMAND_INDEX_MESSAGE = (
    "Throughput exceeds the current capacity for one or more global secondary indexes. DynamoDB is "
    "automatically scaling your index so please try again shortly."
)
PROVISIONED_TABLE_MESSAGE = (
    "The level of configured provisioned throughput for the table was exceeded. Consider increasing your "
    "provisioning level with the UpdateTable API."
)
PROVISIONED_INDEX_MESSAGE = (
    "The level of configured provisioned throughput for one or more global secondary indexes of the table was "
    "exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes "
    "with the UpdateTable API."
)
