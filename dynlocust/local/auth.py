"""SigV4 verification of incoming requests (optional): reject what the service would reject, never log secrets.

Why a cache: the derived signing key depends only on (secret, date, region, service), so it is computed once per
day per key instead of four HMACs per request.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from urllib.parse import quote

from dynlocust.local.errors import CORAL_PREFIX, ServiceError

ALGORITHM = "AWS4-HMAC-SHA256"
SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you provided. Check your AWS Secret "
    "Access Key and signing method. Consult the service documentation for details."
)


def _err(code: str, message: str, status: int = 400) -> ServiceError:
    return ServiceError(code, message, status=status, prefix=CORAL_PREFIX)


class SigV4Verifier:
    """Checks `Authorization: AWS4-HMAC-SHA256 ...` headers against a map of access key id -> secret."""

    def __init__(self, credentials: Mapping[str, str]) -> None:
        self._credentials = dict(credentials)
        self._keys: dict[tuple[str, str, str, str], bytes] = {}

    def __repr__(self) -> str:
        return f"SigV4Verifier(keys={len(self._credentials)})"

    def _signing_key(self, secret: str, date: str, region: str, service: str) -> bytes:
        ck = (secret, date, region, service)
        key = self._keys.get(ck)
        if key is None:
            k = hmac.new(("AWS4" + secret).encode(), date.encode(), hashlib.sha256).digest()
            k = hmac.new(k, region.encode(), hashlib.sha256).digest()
            k = hmac.new(k, service.encode(), hashlib.sha256).digest()
            key = hmac.new(k, b"aws4_request", hashlib.sha256).digest()
            if len(self._keys) > 1024:
                self._keys.clear()
            self._keys[ck] = key
        return key

    def verify(self, method: str, target: str, headers: Mapping[str, str], body: bytes) -> None:
        """Raise the service's error if the request is not signed by an accepted key; return None if it is."""
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
        path, _, query = target.partition("?")
        canonical_query = "&".join(sorted(query.split("&"))) if query else ""
        names = signed_headers.split(";")
        canonical_headers = "".join(f"{n}:{' '.join(headers.get(n, '').split())}\n" for n in names)
        payload_hash = headers.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest()
        canonical = "\n".join(
            [method, quote(path or "/", safe="/~"), canonical_query, canonical_headers, signed_headers, payload_hash]
        )
        scope = f"{date}/{region}/{service}/{terminal}"
        to_sign = f"{ALGORITHM}\n{amz_date}\n{scope}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
        expected = hmac.new(self._signing_key(secret, date, region, service), to_sign.encode(), hashlib.sha256)
        if not hmac.compare_digest(expected.hexdigest(), signature):
            raise _err("InvalidSignatureException", SIGNATURE_MISMATCH)
