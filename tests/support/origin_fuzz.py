"""Requests to a web UI's routes from pages that are not the UI's own, as a pure function of a seed.

Each request takes a route of the running app (its `url_map`, parameters filled at random), a method, a body that
would start a run if it were taken, and one of the ways a foreign page shows: a foreign `Origin` (other hosts, other
ports, `null`, look-alikes that start or end with the UI's own address), a foreign `Referer` without `Origin` on a
state-changing method, or a foreign `Host` (a DNS-rebinding page, with its own `Origin` or none). Every one of them
must be refused (see tests/integration/test_webui_origin.py).
"""

from __future__ import annotations

import random
import re
import urllib.parse
from dataclasses import dataclass

UNSAFE = ("POST", "PUT", "DELETE", "PATCH")
SAFE = ("GET", "HEAD", "OPTIONS")
PARAMETER = re.compile(r"<[^>]+>")
PARAMETER_VALUES = ["x", "first", "..%2F..%2Fetc%2Fpasswd", "a" * 300, "%00", "report.html", "%E2%80%AE"]


@dataclass(frozen=True)
class Route:
    """A rule of the app's url_map: its path pattern and the methods it answers."""

    rule: str
    methods: tuple[str, ...]


@dataclass(frozen=True)
class ForeignRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    how: str
    """Which kind of foreign page sent it: origin, referer or host."""


def foreign_origins(own: str) -> list[str]:
    """Origins that are not `own` (`host:port`) however they are spelled, some of them built to look like it."""
    host, _, port = own.rpartition(":")
    other = str(int(port) + 1 if int(port) < 65535 else int(port) - 1)
    return [
        "http://evil.example",
        "https://evil.example",
        "null",
        f"http://{host}:{other}",
        f"https://{host}:{other}",
        f"http://{own}.evil.example",
        f"http://{own}@evil.example",
        f"http://evil.example#@{own}",
        f"http://evil.example?{own}",
        f"http://evil.example/{own}",
        f"ftp://{own}",
        f"file://{own}",
        f"http://localhost:{port}" if host != "localhost" else f"http://127.0.0.1:{port}",
        f"http://[::1]:{port}",
        f"http://{host}",
        "http://evil.example:80",
        f"http://{host}.:{port}",
        "",
        "http://",
        "garbage",
        f"{own}",
        f"//{own}",
    ]


def _body(rng: random.Random) -> bytes:
    """A form or JSON body that would start load against an attacker's host if it got through."""
    fields = {"user_count": str(rng.choice([1, 3, 100])), "spawn_rate": "3", "host": "http://127.0.0.1:9"}
    if rng.random() < 0.3:
        return b'{"user_class_name": "ScenarioUser", "host": "http://127.0.0.1:9"}'
    if rng.random() < 0.2:
        fields["run_id"] = rng.choice(["evil", "x" * 70, "../up"])
    return urllib.parse.urlencode(fields).encode()


def generate(seed: int, count: int, routes: list[Route], own: str) -> list[ForeignRequest]:
    """`count` foreign requests to `routes` of a UI served at `own` (`host:port`), a pure function of `seed`."""
    rng = random.Random(seed)
    origins = foreign_origins(own)
    out = []
    for _ in range(count):
        route = rng.choice(routes)
        path = PARAMETER.sub(lambda _m: rng.choice(PARAMETER_VALUES), route.rule)
        if rng.random() < 0.1:
            path += "?" + urllib.parse.urlencode({"next": "http://evil.example"})
        how = rng.choice(["origin", "origin", "referer", "host"])
        unsafe = [m for m in route.methods if m in UNSAFE] or list(UNSAFE)
        method = rng.choice(unsafe) if how == "referer" or rng.random() < 0.7 else rng.choice(SAFE)
        headers = {"Content-Type": rng.choice(["application/x-www-form-urlencoded", "application/json", "text/plain"])}
        if how == "origin":
            headers["Origin"] = rng.choice(origins)
        elif how == "referer":
            headers["Referer"] = rng.choice([o for o in origins if o.startswith("http")]) + "/" + rng.choice(["", "x"])
        else:
            evil = (
                rng.choice(["evil.example", "rebind.evil.example", "10.0.0.1", "0.0.0.0"])
                + ":"
                + own.rpartition(":")[2]
            )
            headers["Host"] = evil
            if rng.random() < 0.5:
                headers["Origin"] = f"http://{evil}"  # the rebinding page is same-origin to itself
        out.append(ForeignRequest(method, path, headers, _body(rng) if method in UNSAFE else b"", how))
    return out
