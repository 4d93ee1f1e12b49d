"""Who may come in and how much each request may hold: auth and credentials (``_auth``),
admission and draining (``_admission``), the server-wide in-flight budget
(``_in_flight``), translation off the event loop (``_offload``) and the store's limits
(``_store_limits``).
"""

from __future__ import annotations

from ._admission import Admission, Drain, install_drain_signal
from ._auth import Credentials, authorize, own_credentials, owner_token
from ._in_flight import InFlight, in_flight_charge
from ._offload import Offload
from ._store_limits import Conversation, StoreLimits, conversation_too_long

__all__ = [
    "Admission",
    "Conversation",
    "Credentials",
    "Drain",
    "InFlight",
    "Offload",
    "StoreLimits",
    "authorize",
    "conversation_too_long",
    "in_flight_charge",
    "install_drain_signal",
    "own_credentials",
    "owner_token",
]
