"""Credentials never reach a log line: a logging filter that masks them, installed where log records pass.

botocore's debug output prints request headers (`X-Amz-Security-Token`, `Authorization` with its signature) and,
with some credential providers, the values it loaded. The filter masks, in every record's final text:
- the values of the credential variables in the environment (`AWS_SECRET_ACCESS_KEY`, `AWS_ACCESS_KEY_ID`, ...),
  read when the filter is built (and again by `refresh()`), wherever they appear;
- security-token headers, SigV4 signatures and credential scopes (the access key ID), and
  `aws_access_key_id`/`aws_secret_access_key`/`aws_session_token` assignments, whatever their values (credentials
  from a profile or an instance role are not in the environment).

Logger filters only see records logged on that very logger, not on its children (`botocore.endpoint`), so
`install()` also attaches the filter to the handlers of the root logger and of the named loggers, which every
propagated record passes through.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Mapping

MASK = "***"
SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN")
KEY_ID_ENV = "AWS_ACCESS_KEY_ID"
MIN_KEY_ID = 16
"""The access key ID is not a secret by itself, but it names the account's credential: masked too, when it is as
long as a real one (AWS's are 16 to 128 characters; a dummy such as `local` would mask every such word)."""
LOGGERS = ("dynlocust", "botocore", "urllib3", "locust")
"""Locust's own logger does not propagate: its handlers (console, the web UI's log view) get the filter too."""
MIN_SECRET = 4
"""Shorter environment values are not masked: masking "a" everywhere would wreck every line and hide nothing."""

PATTERNS = (
    # header dicts and raw headers: 'X-Amz-Security-Token': b'...'  /  X-Amz-Security-Token: ...
    re.compile(r"""(?i)(x-amz-security-token['"]?\s*[:=]\s*b?['"]?)([^'",\s}]+)"""),
    re.compile(r"(?i)(Signature[=:]\s*)([0-9a-f]{16,})"),
    # SigV4's Authorization header: Credential=<access key id>/<date>/<region>/<service>/aws4_request
    re.compile(r"(Credential=)([^/,\s'\"]+)"),
    re.compile(r"()(?<![A-Z0-9])((?:AKIA|ASIA)[A-Z0-9]{12,124})(?![A-Z0-9])"),  # shaped like an AWS key ID
    re.compile(r"""(?i)((?:aws_)?access_key_id['"]?\s*[:=]\s*b?['"]?)([^'",\s}]+)"""),
    re.compile(r"""(?i)(['"]?AccessKeyId['"]?\s*:\s*['"])([^'"]+)"""),
    re.compile(r"""(?i)((?:aws_)?secret_access_key['"]?\s*[:=]\s*b?['"]?)([^'",\s}]+)"""),
    re.compile(r"""(?i)((?:aws_)?session_token['"]?\s*[:=]\s*b?['"]?)([^'",\s}]+)"""),
    re.compile(r"""(?i)(['"]?(?:SecretAccessKey|SessionToken)['"]?\s*:\s*['"])([^'"]+)"""),
)


def secrets_from(environ: Mapping[str, str]) -> tuple[str, ...]:
    values = {environ.get(name, "") for name in SECRET_ENV}
    if len(key_id := environ.get(KEY_ID_ENV, "")) >= MIN_KEY_ID:
        values.add(key_id)
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET), key=len, reverse=True))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret value and every credential-shaped field masked."""
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern in PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + MASK, text)
    return text


class RedactingFilter(logging.Filter):
    """Rewrites each record's message (and traceback text) with credentials masked; never drops a record."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self._environ = environ
        self.secrets: tuple[str, ...] = ()
        self.refresh()

    def refresh(self) -> None:
        """Re-read the secret values (credentials set after start-up)."""
        self.secrets = secrets_from(os.environ if self._environ is None else self._environ)

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_dynlocust_redacted", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: let logging report it as it would
            return True
        record.msg, record.args = redact(message, self.secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text, self.secrets)
        if record.stack_info:
            record.stack_info = redact(record.stack_info, self.secrets)
        record._dynlocust_redacted = True
        return True


_FILTER: RedactingFilter | None = None


def install(loggers: Iterable[str] = LOGGERS) -> RedactingFilter:
    """Attach one shared filter to the named loggers, their handlers and the root logger's handlers (idempotent;
    call it again after handlers are added to cover them too)."""
    global _FILTER
    if _FILTER is None:
        _FILTER = RedactingFilter()
    else:
        _FILTER.refresh()
    targets: list[logging.Logger] = [logging.getLogger()]
    targets += [logging.getLogger(name) for name in loggers]
    for logger in targets:
        if logger.name != "root" and _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
        for handler in logger.handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)
    return _FILTER
