"""A fake Google OAuth token endpoint and metadata server on 127.0.0.1, and the credential
files that point at it: what Application Default Credentials refresh against in tests.

``TokenEndpoint`` answers

- ``POST /token``: a service account's JWT grant (its assertion's RS256 signature checked
  with the account's public key, its issuer the account, its scope cloud-platform) or an
  authorized user's refresh-token grant (client id, secret and refresh token checked);
- the metadata server's ping (``GET /``), project id and default service account's token
  (``Metadata-Flavor: Google`` required);

with ``tok-1``, ``tok-2``... each ``expires_in`` seconds, or as ``behave`` says:
``"refuse"`` (400 ``invalid_grant``, its description quoting what was sent),
``"fail"`` (503), ``"slow"`` (answers after ``delay`` seconds).
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
EMAIL = "rxgem-test@rxgem-proj.iam.gserviceaccount.com"
PROJECT = "rxgem-proj"
GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token"
CLIENT_SECRET = "client-SECRET-5b7e"
REFRESH_TOKEN = "refresh-SECRET-91ac"


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class TokenEndpoint:
    """The fake; ``issued`` lists the tokens given, ``grants`` each grant's kind."""

    def __init__(self, expires_in: int = 3600) -> None:
        self.expires_in = expires_in
        self.behave = "ok"
        self.delay = 0.0
        self.issued: list[str] = []
        self.grants: list[str] = []
        self.problems: list[str] = []
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.pem = self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self.url = ""
        self._lock = threading.Lock()

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    @property
    def host(self) -> str:
        return self.url.removeprefix("http://")

    def service_account(self, folder: Path) -> Path:
        """A service account's JSON key file whose ``token_uri`` is this endpoint."""
        path = folder / "service-account.json"
        info = {
            "type": "service_account",
            "project_id": PROJECT,
            "private_key_id": "0123456789abcdef",
            "private_key": self.pem,
            "client_email": EMAIL,
            "client_id": "1234567890",
            "token_uri": self.token_uri,
        }
        path.write_text(json.dumps(info), encoding="utf-8")
        return path

    def authorized_user(self, folder: Path) -> Path:
        """gcloud's ``application_default_credentials.json`` (an authorized user)."""
        path = folder / "application_default_credentials.json"
        info = {
            "type": "authorized_user",
            "client_id": "client-id.apps.googleusercontent.com",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH_TOKEN,
            "token_uri": self.token_uri,
        }
        path.write_text(json.dumps(info), encoding="utf-8")
        return path

    def _check_assertion(self, assertion: str) -> str | None:
        head, claims, signature = assertion.split(".")
        public = self.key.public_key()
        try:
            public.verify(
                _b64(signature), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
            )
        except Exception:
            return "bad signature"
        body = json.loads(_b64(claims))
        # google-auth's audience is Google's token endpoint, wherever the file sends it
        if body.get("aud") != GOOGLE_TOKEN_URI or body.get("iss") != EMAIL:
            return f"bad audience or issuer: {body.get('aud')}, {body.get('iss')}"
        if SCOPE not in str(body.get("scope", "")).split():
            return f"scope {body.get('scope')!r}"
        return None

    def grant(self, kind: str, problem: str | None) -> tuple[int, dict[str, Any]]:
        """What the endpoint answers a grant of this kind."""
        with self._lock:
            self.grants.append(kind)
            behave, delay = self.behave, self.delay
        if delay:
            time.sleep(delay)
        if problem is not None:
            self.problems.append(problem)
            return 400, {"error": "invalid_grant", "error_description": problem}
        if behave == "refuse":
            return 400, {
                "error": "invalid_grant",
                "error_description": f"Invalid grant: {REFRESH_TOKEN} {CLIENT_SECRET}",
            }
        if behave == "fail":
            return 503, {"error": "backend_error", "error_description": "try later"}
        with self._lock:
            token = f"tok-{len(self.issued) + 1}"
            self.issued.append(token)
        return 200, {"access_token": token, "expires_in": self.expires_in, "token_type": "Bearer"}


_ACCOUNTS = "/computeMetadata/v1/instance/service-accounts/"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any] | str, metadata: bool = False) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header(
            "content-type", "text/plain" if isinstance(body, str) else "application/json"
        )
        self.send_header("content-length", str(len(data)))
        if metadata:
            self.send_header("Metadata-Flavor", "Google")
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        endpoint = self.server.endpoint
        form = parse_qs(self.rfile.read(int(self.headers.get("content-length", 0))).decode())
        kind = form.get("grant_type", [""])[0]
        if self.path != "/token":
            self._send(404, {"error": "not_found"})
            return
        if kind == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            problem = endpoint._check_assertion(form.get("assertion", [""])[0])
        elif kind == "refresh_token":
            ok = form.get("refresh_token") == [REFRESH_TOKEN] and form.get("client_secret") == [
                CLIENT_SECRET
            ]
            problem = None if ok else "bad refresh token or client secret"
        else:
            problem = f"grant type {kind!r}"
        self._send(*endpoint.grant(kind, problem))

    def do_GET(self) -> None:
        endpoint = self.server.endpoint
        if self.headers.get("Metadata-Flavor") != "Google":
            self._send(403, {"error": "no Metadata-Flavor"})
            return
        path = self.path.split("?")[0]
        if path == "/":
            self._send(200, "", metadata=True)
        elif path == "/computeMetadata/v1/project/project-id":
            self._send(200, PROJECT, metadata=True)
        elif path == "/computeMetadata/v1/universe/universe-domain":
            self._send(200, "googleapis.com", metadata=True)
        elif path.startswith(_ACCOUNTS) and path.endswith("/token"):  # by email after the info
            status, body = endpoint.grant("metadata", None)
            self._send(status, body, metadata=True)
        elif path.startswith(_ACCOUNTS):
            self._send(200, {"email": EMAIL, "scopes": [SCOPE], "aliases": ["default"]}, True)
        else:
            self._send(404, {"error": "not_found"}, metadata=True)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    endpoint: TokenEndpoint


@contextmanager
def token_endpoint(expires_in: int = 3600) -> Iterator[TokenEndpoint]:
    """A :class:`TokenEndpoint` serving on 127.0.0.1 while the block runs."""
    endpoint = TokenEndpoint(expires_in)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.endpoint = endpoint
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
