"""The service's documented limits, in one place, each with the documentation's words beside it.

The local endpoint checks these before any costly work (parsing, evaluating, storing), so that no request can
make it do more than the real service would agree to do. Sources: the DynamoDB Developer Guide, "Service,
account, and table quotas", and the API reference of each operation.
"""

from __future__ import annotations
