"""`dynlocust compare` with every `Repository` call slowed by a busy-wait of a tenth of its own time (a 10% slower
mapper, injected without changing the mapper): `python -m tests.support.slow_mapper COMPARE-ARGS...`."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any

import locust  # noqa: F401 - first: gevent patching before botocore

from dynlocust.compare import cli as compare
from dynlocust.mapper.repository import Repository

SLOWDOWN = 0.10
_depth = [0]  # a call made inside another slowed call is not slowed twice


def _slowed(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _depth[0]:
            return method(*args, **kwargs)
        _depth[0] += 1
        start = time.perf_counter()
        try:
            result = method(*args, **kwargs)
        finally:
            _depth[0] -= 1
        until = time.perf_counter() + (time.perf_counter() - start) * SLOWDOWN
        while time.perf_counter() < until:  # busy: CPU time, as slower mapper code would spend
            pass
        return result

    return wrapper


def main(argv: list[str]) -> int:
    for name, member in list(vars(Repository).items()):
        if callable(member) and not name.startswith("_"):
            setattr(Repository, name, _slowed(member))
    return compare.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
