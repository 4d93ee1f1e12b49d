"""httpx transports and hooks for the upstream's connections, as httpx keeps its own in
``httpx/_transports``: :mod:`.aiohttp` (an ``httpx.AsyncBaseTransport`` over aiohttp, which
the ``server`` extra installs; imported on first use) and :mod:`.quick_ack` (the head of
each answer acknowledged at once, on either transport)."""
