"""SigV4 verification of incoming requests (optional): reject what the service would reject, never log secrets.

What is checked, beyond the signature itself: the payload hash is always computed from the body received (an
`x-amz-content-sha256` header cannot stand in for it); `X-Amz-Date` is within 5 minutes of now, either way;
`host` and, when sent, `x-amz-target` are among the signed headers, so a signed request cannot be re-pointed at
another operation; the credential scope names the request's date, the region (the one in the Host name when it
names one, else the endpoint's --region), the `dynamodb` service and `aws4_request`.

Why a cache: the derived signing key depends only on (secret, date, region, service), so it is computed once per
day per key instead of four HMACs per request.
"""

from __future__ import annotations

import calendar
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping
from urllib.parse import quote

from dynlocust.dynamodb import SIGV4_ALGORITHM, SIGV4_TERMINATOR, derive_signing_key
from dynlocust.local.errors import CORAL_PREFIX, ServiceError

ALGORITHM = SIGV4_ALGORITHM
SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret "
    "Access Key and signing method. Consult the service documentation for details."
)


SERVICE = "dynamodb"
TERMINATOR = SIGV4_TERMINATOR
#: The service refuses a request signed more than 5 minutes before or after its own clock.
CLOCK_SKEW_SECONDS = 5 * 60
_AMZ_DATE_RE = re.compile(r"[0-9]{8}T[0-9]{6}Z")
_REGION_RE = re.compile(r"[a-z]{2}(-[a-z0-9]+)+-[0-9]+")
_HOST_REGION_RE = re.compile(r"dynamodb\.([a-z0-9-]+)\.amazonaws\.com(?::[0-9]+)?")


def _err(code: str, message: str, status: int = 400) -> ServiceError:
    return ServiceError(code, message, status=status, prefix=CORAL_PREFIX)


def _amz_time(seconds: float) -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(seconds))


def stamp_seconds(stamp: str) -> int:
    """Seconds since the epoch of an ISO 8601 basic stamp such as 20250101T120000Z (already pattern-checked)."""
    return calendar.timegm(
        (int(stamp[:4]), int(stamp[4:6]), int(stamp[6:8]), int(stamp[9:11]), int(stamp[11:13]), int(stamp[13:15]))
    )


class SigV4Verifier:
    """Checks `Authorization: AWS4-HMAC-SHA256 ...` headers against a map of access key id -> secret."""

    def __init__(
        self, credentials: Mapping[str, str], clock: Callable[[], float] = time.time, region: str = "us-east-1"
    ) -> None:
        self._credentials = dict(credentials)
        self._region = region  # the endpoint's own (--region): the scope's region when the Host names none
        self._keys: dict[tuple[str, str, str, str], bytes] = {}
        self._clock = clock
        self._stamp: tuple[str, int] = ("", 0)  # the last X-Amz-Date seen and its seconds: clients send one per second

    def __repr__(self) -> str:
        return f"SigV4Verifier(keys={len(self._credentials)})"

    def _signing_key(self, secret: str, date: str, region: str, service: str) -> bytes:
        ck = (secret, date, region, service)
        key = self._keys.get(ck)
        if key is None:
            key = derive_signing_key(secret, date, region, service)
            if len(self._keys) > 1024:
                self._keys.clear()
            self._keys[ck] = key
        return key

    def verify(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes | bytearray, signing_name: str = SERVICE
    ) -> None:
        """Raise the service's error if the request is not signed by an accepted key for `signing_name` (DynamoDB's,
        or CloudWatch's for its metrics); return None if it is."""
        auth = headers.get("authorization")
        if not auth:
            raise _err("MissingAuthenticationTokenException", "Request is missing Authentication Token")
        if not auth.startswith(ALGORITHM + " "):
            raise _err("IncompleteSignatureException", f"Unsupported authorization type: {auth.split(' ')[0]}")
        fields: dict[str, str] = {}
        for part in auth[len(ALGORITHM) + 1 :].split(","):
            k, _, v = part.strip().partition("=")
            fields[k] = v
        try:
            credential = fields["Credential"]
            signed_headers = fields["SignedHeaders"]
            signature = fields["Signature"]
            akid, date, region, service, terminal = credential.split("/")
        except (KeyError, ValueError) as exc:
            raise _err(
                "IncompleteSignatureException",
                "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters.",
            ) from exc
        secret = self._credentials.get(akid)
        if secret is None:
            raise _err("UnrecognizedClientException", "The security token included in the request is invalid.")
        amz_date = headers.get("x-amz-date", "")
        self._check_date(amz_date)
        self._check_scope(
            date, region, service, terminal, amz_date, headers.get("host", ""), self._region, signing_name
        )
        names = signed_headers.split(";")
        for required in ("host", "x-amz-target"):
            if required not in names and (required == "host" or required in headers):
                shown = "'Host' or ':authority'" if required == "host" else "'X-Amz-Target'"
                raise _err("InvalidSignatureException", f"{shown} must be a 'SignedHeader' in the AWS Authorization.")
        path, _, query = target.partition("?")
        canonical_query = "&".join(sorted(query.split("&"))) if query else ""
        canonical_headers = "".join(f"{n}:{' '.join(headers.get(n, '').split())}\n" for n in names)
        # always the hash of the body received: a client-sent x-amz-content-sha256 is only a claim about it
        payload_hash = hashlib.sha256(body).hexdigest()
        canonical = "\n".join(
            [method, quote(path or "/", safe="/~"), canonical_query, canonical_headers, signed_headers, payload_hash]
        )
        scope = f"{date}/{region}/{service}/{terminal}"
        to_sign = f"{ALGORITHM}\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        expected = hmac.new(self._signing_key(secret, date, region, service), to_sign.encode(), hashlib.sha256)
        if not hmac.compare_digest(expected.hexdigest(), signature):
            raise _err("InvalidSignatureException", SIGNATURE_MISMATCH)

    def _check_date(self, amz_date: str) -> None:
        """X-Amz-Date present, well formed and within CLOCK_SKEW_SECONDS of now, as the service requires."""
        if not _AMZ_DATE_RE.fullmatch(amz_date):
            raise _err(
                "IncompleteSignatureException",
                "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
            )
        now = self._clock()
        if self._stamp[0] != amz_date:
            self._stamp = (amz_date, stamp_seconds(amz_date))
        signed = self._stamp[1]
        if signed < now - CLOCK_SKEW_SECONDS:
            raise _err(
                "InvalidSignatureException",
                f"Signature expired: {amz_date} is now earlier than {_amz_time(now - CLOCK_SKEW_SECONDS)} "
                f"({_amz_time(now)} - 5 min.)",
            )
        if signed > now + CLOCK_SKEW_SECONDS:
            raise _err(
                "InvalidSignatureException",
                f"Signature not yet current: {amz_date} is still later than {_amz_time(now + CLOCK_SKEW_SECONDS)} "
                f"({_amz_time(now)} + 5 min.)",
            )

    @staticmethod
    def _check_scope(
        date: str, region: str, service: str, terminal: str, amz_date: str, host: str, own_region: str, wanted: str
    ) -> None:
        """The credential scope must name the request's own date, region and service: the region the Host names
        (dynamodb.REGION.amazonaws.com), else the endpoint's own, as a regional endpoint of the service refuses a
        request signed for another region."""
        if date != amz_date[:8]:
            raise _err(
                "InvalidSignatureException",
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                f"'{date}' != '{amz_date[:8]}', from '{amz_date}'.",
            )
        host_region = _HOST_REGION_RE.fullmatch(host.lower())
        expected = host_region.group(1) if host_region is not None else own_region
        if not _REGION_RE.fullmatch(region) or region != expected:
            raise _err("InvalidSignatureException", "Credential should be scoped to a valid region. ")
        if service != wanted:
            raise _err("InvalidSignatureException", f"Credential should be scoped to correct service: '{wanted}'. ")
        if terminal != TERMINATOR:
            raise _err(
                "InvalidSignatureException",
                f"Credential should be scoped with a valid terminator: '{TERMINATOR}', not '{terminal}'. ",
            )
