"""`dynlocust compare`: what the mapper costs over the raw client, measured pair by pair against a live endpoint.

`cli` (the command), `measure` (one pair's timing and the table), `reference` (the shipped pairs) and
`pynamodb_reference` (the same pairs through PynamoDB).
"""
