"""What both bridges share: a lazy subscription, disposed of once they stop, and the
notification kinds their sinks queue."""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar

from reactivex import Observable, abc

__all__ = ["DONE", "ERROR", "NEXT", "Bridge"]

T = TypeVar("T")

NEXT: Final = 0
ERROR: Final = 1
DONE: Final = 2


class Bridge(Generic[T]):
    """A lazy subscription to ``source``, disposed of once the consumer stops."""

    def __init__(self, source: Observable[T]) -> None:
        self._source = source
        self._subscription: abc.DisposableBase | None = None
        self._finished = False

    def close(self) -> None:
        """Stop: dispose of the subscription (idempotent) and drop what is queued."""
        self._finished = True
        if self._subscription is not None:
            self._subscription.dispose()
        self._release()

    def _release(self) -> None:
        """Let a producer waiting for room go (it finds the subscription disposed)."""

    def __del__(self) -> None:
        self.close()

    def _outcome(self, kind: int, value: Any, stop: type[Exception]) -> T:
        """The item to return for a notification; at the end, close and raise."""
        if kind == NEXT:
            return value  # type: ignore[no-any-return]
        self.close()
        if kind == ERROR:
            raise value
        raise stop
