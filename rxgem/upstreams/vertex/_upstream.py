"""Vertex AI's ``generateContent`` upstream."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ...core import MissingCredentialsError
from .._generate_content import GenerateContent
from .._upstream import Tokens

__all__ = ["VERTEX", "base_url"]

_PROJECT: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:_-]{0,99}")
_LOCATION: Final = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")


class Vertex(GenerateContent):
    """``generateContent`` on Vertex AI, whose server finds its own access tokens when it
    is given none: Application Default Credentials, refreshed before they expire."""

    finds_credentials = "Application Default Credentials"

    def own_tokens(self, *, timeout: float) -> Tokens:
        from ._adc import find_adc  # google-auth, the vertex extra: only when used

        tokens, _ = find_adc(timeout=timeout)
        return tokens


VERTEX: Final = Vertex("generate-content", "vertex", "gcp.vertex_ai", "access_token")
"""A client's own token is an OAuth access token."""


def base_url(spec: str, environ: Mapping[str, str]) -> str:
    """Vertex AI's base URL for Gemini models at ``spec``: ``PROJECT/LOCATION``,
    ``PROJECT``, or ``""``; what it leaves out comes from ``GOOGLE_CLOUD_PROJECT`` and
    ``GOOGLE_CLOUD_LOCATION`` (as google-genai reads them), the project else from the
    Application Default Credentials, the location else ``global``.

    Raises:
        ValueError: ``spec``, or a variable, is not a project or a location.
        MissingCredentialsError: no project given, and none found in the credentials.
    """
    project, _, location = spec.partition("/")
    project = project or environ.get("GOOGLE_CLOUD_PROJECT", "")
    location = location or environ.get("GOOGLE_CLOUD_LOCATION", "") or "global"
    if not project:
        from ._adc import find_adc

        found = find_adc()[1]
        if found is None:
            raise MissingCredentialsError(
                "no Google Cloud project: give PROJECT/LOCATION or set GOOGLE_CLOUD_PROJECT"
                " (the credentials found name none)"
            )
        project = found
    if not _PROJECT.fullmatch(project) or not _LOCATION.fullmatch(location):
        raise ValueError(
            "a Vertex AI project and location are PROJECT/LOCATION (e.g."
            f" my-project/us-central1), not {project}/{location}"
        )
    host = "aiplatform.googleapis.com"
    if location != "global":
        host = f"{location}-{host}"
    return f"https://{host}/v1/projects/{project}/locations/{location}/publishers/google"
