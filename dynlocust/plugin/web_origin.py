"""The web UI's origin guard: only the UI's own page can change anything, and no other origin can read it.

Locust's Flask app answers every origin (`CORS(app)` echoes any `Origin` back in `Access-Control-Allow-Origin`),
so any web page the operator's browser opens could start a load test with the operator's credentials, stop one,
or read `/logs` and the statistics. Binding to 127.0.0.1 does not help: the operator's own browser sends the
request. The guard wraps the Flask app as WSGI middleware (Locust's source untouched) and, for every route,
Locust's, dynlocust's and a locustfile's own:

- refuses (403) a request whose `Origin` is not the UI's own: the `Host` the page was served under, or
  `--web-origin` (the address a reverse proxy serves it at); `Origin: null` (a sandboxed frame, a `data:` page,
  `Referrer-Policy: no-referrer`) is foreign;
- refuses a state-changing request (any method but GET, HEAD and OPTIONS) without `Origin` whose `Referer` is
  foreign. With neither header it is let through: every current browser sends `Origin` on a POST, and curl or a
  script (which could send any header it liked) sends neither;
- refuses, when the UI is bound to a loopback address, a `Host` that is not a loopback name nor `--web-origin`'s:
  a DNS-rebinding page (evil.example resolved to 127.0.0.1) is same-origin to itself, and only its `Host` shows it;
- removes every `Access-Control-*` header from every answer: the page is same-origin, so no other origin reads.

The threat model is in docs/options.md ("The web UI's origin check").
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing in Locust's and dynlocust's routes; every other one is state-changing."""
CORS_PREFIX = "access-control-"
LOOPBACK_NAMES = frozenset({"localhost", "localhost."})

StartResponse = Callable[..., Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def is_loopback(host: str) -> bool:
    """`host` (a name or an address, IPv6 with or without brackets) is this machine's loopback."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str | None:
    """The name part of a `Host` header (`127.0.0.1:8089` -> `127.0.0.1`, `[::1]:8089` -> `::1`), or None."""
    try:
        return urlsplit("//" + host_header).hostname
    except ValueError:
        return None


def _netloc(url: str) -> str | None:
    """The `host[:port]` of an http(s) URL as a browser writes it in `Origin`/`Referer`, or None (`null`, other
    schemes, garbage). Userinfo stays in: `http://127.0.0.1:8089@evil.example` is not 127.0.0.1's."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return parts.netloc.lower()


@dataclass(frozen=True)
class OriginRule:
    """Whose requests the UI takes: `loopback_only` (it is bound to a loopback address), and `web_origin`, the
    `scheme://host[:port]` a reverse proxy serves it at ("" for none)."""

    loopback_only: bool
    web_origin: str = ""

    def refusal(self, method: str, host: str | None, origin: str | None, referer: str | None) -> str | None:
        """Why a request with these headers is refused, or None when it is taken."""
        configured = _netloc(self.web_origin) if self.web_origin else None
        if host is not None and self._host_refused(host, configured):
            return f"Host {host!r} is not a name this UI is served under (DNS rebinding?)"
        own = {n for n in (host.lower() if host else None, configured) if n}
        if origin is not None:
            return None if _netloc(origin) in own else f"Origin {origin!r} is not this UI's own"
        if method.upper() in SAFE_METHODS or referer is None:
            return None
        return None if _netloc(referer) in own else f"Referer {referer!r} is not this UI's own page"

    def _host_refused(self, host: str, configured: str | None) -> bool:
        name = _host_name(host)
        if name is None:
            return True
        if configured is not None and name == _host_name(configured):
            return False
        return self.loopback_only and not is_loopback(name)


class OriginGuard:
    """WSGI middleware around a Flask app's `wsgi_app`: refuses what `OriginRule` refuses, strips CORS headers."""

    def __init__(self, app: WsgiApp, rule: OriginRule) -> None:
        self.app = app
        self.rule = rule
        self.refused = 0

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        why = self.rule.refusal(
            str(environ.get("REQUEST_METHOD", "GET")),
            environ.get("HTTP_HOST"),
            environ.get("HTTP_ORIGIN"),
            environ.get("HTTP_REFERER"),
        )
        if why is not None:
            self.refused += 1
            if self.refused <= 10 or self.refused % 1000 == 0:  # an attack page can send many: the log stays short
                log.warning(
                    "web UI: refused %s %s (%d so far): %s", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO"),
                    self.refused, why,
                )  # fmt: skip
            body = f"dynlocust: refused: {why}; see 'The web UI's origin check' in docs/options.md\n".encode()
            start_response(
                "403 Forbidden",
                [
                    ("Content-Type", "text/plain; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                    ("X-Content-Type-Options", "nosniff"),
                    ("Cache-Control", "no-store"),
                ],
            )
            return [body]

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            kept = [(k, v) for k, v in headers if not k.lower().startswith(CORS_PREFIX)]
            return start_response(status, kept, exc_info) if exc_info is not None else start_response(status, kept)

        return self.app(environ, start)


def install(app: Any, bind_host: str, web_origin: str = "") -> OriginGuard:
    """Wrap a Flask app's `wsgi_app` once (the app reads it on every request, so this holds for a running server)."""
    current = app.wsgi_app
    if isinstance(current, OriginGuard):
        return current
    guard = OriginGuard(
        current, OriginRule(loopback_only=bool(bind_host) and is_loopback(bind_host), web_origin=web_origin)
    )
    app.wsgi_app = guard
    return guard
