"""The embedded local DynamoDB-compatible endpoint: JSON 1.0 protocol, in-memory tables, capacity emulation."""

from dynlocust.local.config import LocalConfig
from dynlocust.local.embedded import LocalEndpoint, serve_in_thread

__all__ = ["LocalConfig", "LocalEndpoint", "serve_in_thread"]
