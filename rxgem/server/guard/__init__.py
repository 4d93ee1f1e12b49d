"""Who may come in and how much each request may hold: auth and credentials (``_auth``),
admission and draining (``_admission``) and the server-wide in-flight budget
(``_in_flight``). (Where a translation runs and the store's limits are the gateway's:
:mod:`rxgem.gateway`.)
"""

from __future__ import annotations

from ._admission import Admission, Drain, install_drain_signal
from ._auth import Credentials, authorize, own_credentials, owner_token
from ._in_flight import InFlight, in_flight_charge

__all__ = [
    "Admission",
    "Credentials",
    "Drain",
    "InFlight",
    "authorize",
    "in_flight_charge",
    "install_drain_signal",
    "own_credentials",
    "owner_token",
]
