"""Where a request's translation runs (:class:`~rxgem.gateway._offload.Offload`): a small
body's in place, a large one's in a worker thread, one at a time, and a translation that
catches warnings (process-wide) never beside another."""

from __future__ import annotations

import asyncio
import gc
import threading

from rxgem.gateway._offload import Offload


def test_a_small_body_is_translated_in_place_a_large_one_in_a_thread() -> None:
    async def main() -> tuple[str, str]:
        offload = Offload(inline_bytes=100)
        here = await offload.run(100, lambda: threading.current_thread().name)
        there = await offload.run(101, lambda: threading.current_thread().name)
        return here, there

    here, there = asyncio.run(main())
    assert here == threading.current_thread().name
    assert there != here


def test_one_thread_at_a_time_and_a_warning_catcher_waits_for_it() -> None:
    release = threading.Event()
    order: list[str] = []

    def large() -> None:
        order.append("large started")
        release.wait(10)
        order.append("large ended")

    async def main() -> None:
        offload = Offload(inline_bytes=100)
        first = asyncio.ensure_future(offload.run(1_000, large))
        await asyncio.sleep(0.05)
        second = asyncio.ensure_future(offload.run(1_000, lambda: order.append("second")))
        small = asyncio.ensure_future(offload.run_alone(10, lambda: order.append("alone")))
        plain = await offload.run(10, lambda: order.append("plain") or "done")
        assert plain == "done"  # a small one that catches nothing does not wait
        await asyncio.sleep(0.1)
        assert order == ["large started", "plain"]
        release.set()
        await asyncio.gather(first, second, small)

    asyncio.run(main())
    assert order[:3] == ["large started", "plain", "large ended"]
    assert sorted(order[3:]) == ["alone", "second"]


def test_the_collector_is_on_again_after_the_thread_even_if_the_work_fails() -> None:
    def failing() -> None:
        assert not gc.isenabled()  # held off while the work runs
        raise ValueError("bad request")

    async def main() -> None:
        offload = Offload(inline_bytes=0)
        try:
            await offload.run(1, failing)
        except ValueError:
            pass
        else:
            raise AssertionError("the work's error was lost")

    assert gc.isenabled()
    asyncio.run(main())
    assert gc.isenabled()


def test_a_cancelled_caller_keeps_the_turn_until_its_thread_ends() -> None:
    release = threading.Event()
    running: list[int] = []

    def work() -> None:
        running.append(1)
        assert len(running) == 1, "two threads at once"
        release.wait(10)
        running.pop()

    async def main() -> None:
        offload = Offload(inline_bytes=0)
        first = asyncio.ensure_future(offload.run(1, work))
        await asyncio.sleep(0.05)
        first.cancel()
        second = asyncio.ensure_future(offload.run(1, work))
        await asyncio.sleep(0.05)
        assert not second.done()
        release.set()
        await second
        assert first.cancelled()

    asyncio.run(main())
