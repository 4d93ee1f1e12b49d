"""``rxgem.bridge.FlowGate``: the upstream read waits while a send to the client is pending."""

from __future__ import annotations

import asyncio

from rxgem.bridge import FlowGate


def test_the_flow_gate_holds_the_reader_while_a_send_is_pending() -> None:
    async def scenario() -> list[str]:
        gate = FlowGate()
        order: list[str] = []
        await gate.ready()  # idle: passes at once
        gate.hold()

        async def reader() -> None:
            await gate.ready()
            order.append("read")

        task = asyncio.ensure_future(reader())
        await asyncio.sleep(0.01)
        order.append("send done")
        gate.release()
        await task
        return order

    assert asyncio.run(scenario()) == ["send done", "read"]
