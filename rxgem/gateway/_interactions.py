"""A background run's calls to Gemini's Interactions API (``--upstream-api interactions``):
create, get, stream from its start and cancel, on the gateway's pools, and an ended
run's object as a Response."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import reactivex
from reactivex import Observable

from ..converter import ResponsesConverter, interaction_response
from ..core import MalformedStreamError
from ..core.pipeline import INTERACTIONS_RESPONSES_STAGES
from ..core.responses import Response, ResponsesEvent
from ..operators import responses_operator
from ..transport import (
    cancel_interaction,
    create_interaction,
    from_interactions,
    get_interaction,
    is_google_interaction_id,
)
from ._options import GatewayOptions
from ._pools import Pools
from ._trace import Keys

__all__ = ["Interactions"]


def _kept_id_refused(interaction_id: str) -> MalformedStreamError | None:
    """The error for a run's id kept in the store that is not one Google gives (kept
    before ids were checked as they came): Google's fault, never the client's."""
    if is_google_interaction_id(interaction_id):
        return None
    return MalformedStreamError("the interaction id Google gave this response is not one")


class Interactions:
    """A background run's calls to Gemini's Interactions API, on the gateway's pools and
    pipeline options (chat completions and foreground responses go through the gateway's
    own calls, with ``upstream="interactions"``)."""

    def __init__(self, options: GatewayOptions, pools: Pools) -> None:
        self.settings = options
        self.pools = pools
        self.responses_pipeline = options.responses_pipeline()
        """The pipeline options for Responses answers (``upstream`` included)."""

    def _credentials(self, credentials: Keys) -> dict[str, Any]:
        return {
            "api_key": credentials.api_key,
            "access_token": credentials.access_token,
            "environ": {},
        }

    def replay(
        self,
        interaction_id: str,
        credentials: Keys,
        options: Mapping[str, Any],
        on_start: Callable[[ResponsesConverter], None] | None = None,
    ) -> Observable[ResponsesEvent]:
        """The Responses events of a stored run's stream, from its start (``options``: the
        Responses pipeline's, ``upstream`` included)."""
        refused = _kept_id_refused(interaction_id)
        if refused is not None:
            return reactivex.throw(refused)
        operator = responses_operator(options, on_start)
        return from_interactions(
            {},
            interaction_id=interaction_id,
            base_url=self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            client=self.pools.next_client(),
            max_line_bytes=self.settings.max_line_bytes,
            record=self.settings.recorder,
        ).pipe(operator)

    async def create(self, body: Mapping[str, Any], credentials: Keys) -> dict[str, Any]:
        """Create a run (a background one answers at once) and return its object."""
        client = self.pools.next_client()
        return await create_interaction(
            client, body, self.settings.upstream, **self._credentials(credentials)
        )

    async def get(self, interaction_id: str, credentials: Keys) -> dict[str, Any]:
        """The run's Interaction object as it stands."""
        refused = _kept_id_refused(interaction_id)
        if refused is not None:
            raise refused
        client = self.pools.next_client()
        return await get_interaction(
            client, interaction_id, self.settings.upstream, **self._credentials(credentials)
        )

    async def cancel(self, interaction_id: str, credentials: Keys) -> dict[str, Any]:
        """Cancel the run at Google; its object after."""
        refused = _kept_id_refused(interaction_id)
        if refused is not None:
            raise refused
        client = self.pools.next_client()
        return await cancel_interaction(
            client, interaction_id, self.settings.upstream, **self._credentials(credentials)
        )

    @staticmethod
    def response(interaction: Mapping[str, Any], options: Mapping[str, Any]) -> Response:
        """An ended run's Interaction object as the Responses ``response`` (``options``:
        the Responses pipeline's; the output stage's are taken)."""
        names = INTERACTIONS_RESPONSES_STAGES[-1].declared
        own = {k: v for k, v in options.items() if k in names}
        return interaction_response(msgspec.json.encode(interaction), **own)
