"""A valid scenario that the table-driven tests break one line at a time (line numbers in comments)."""

BASE = """\
name: base
target:
  local: {capacity_scale: 0.05}
transport: boto3
tables:
  - name: items
    partition_key: {name: pk, type: S}
    sort_key: {name: sk, type: S}
    gsis:
      - {name: by_owner, partition_key: {name: owner, type: S}}
    seed: {items: 100, item_size: 512}
workload:
  item_size: 1024
  keys: {distribution: uniform}
  operations:
    - {op: put, weight: 9}
    - {op: get, weight: 1}
phases:
  - ramp: {from: 100, to: 400, step: 100, window: 15s}
  - steps: [{rate: 500, window: 30s}]
concurrency: 10
deadline: 8s
bin: 10s
"""
# line numbers of BASE, for the tests
LINE = {
    "target.local": 3,
    "tables[0].name": 6,
    "tables[0].gsis": 9,
    "tables[0].seed": 11,
    "workload.item_size": 13,
    "workload.keys": 14,
    "ops[0]": 16,
    "ops[1]": 17,
    "phases[0]": 19,
    "phases[1]": 20,
    "concurrency": 21,
    "deadline": 22,
    "bin": 23,
}


def variant(old: str, new: str) -> str:
    """BASE with exactly one occurrence of ``old`` replaced (fails loudly if the test's anchor is stale)."""
    assert BASE.count(old) == 1, old
    return BASE.replace(old, new)
