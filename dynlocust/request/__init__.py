"""One DynamoDB request: the measured client, its `RequestRecord`, its `Outcome`, operations, keys, transports.

Everything a single call needs and nothing of a run: the layers above count what this layer records.
"""
