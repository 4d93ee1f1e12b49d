"""The store contract, the same on every backend (SQLite, Redis): what the Responses
endpoint relies on for ``store``, ``previous_response_id``, ``item_reference``,
``GET``/``DELETE /v1/responses/{id}`` and ``/input_items``."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from store_helpers import OWNER_A, OWNER_B, StoreFactory, item, run, turn

from rxgem.store import (
    ChainTooLongError,
    InvalidIdError,
    InvalidPageError,
    ItemsPage,
    RecordTooLargeError,
    StoredTurn,
)

MALFORMED = [
    "",
    "resp_",
    "resp",
    "msg_1",
    "resp_../../etc/passwd",
    "resp_a b",
    "resp_*",
    "resp_[a]",
    "resp_{x}",
    "resp_\u00e9",
    "resp_a\nb",
    "resp_" + "a" * 124,
]


def test_a_saved_turn_reads_back_whole(make_store: StoreFactory) -> None:
    saved = turn("resp_1", inputs=3, outputs=2)

    async def scenario() -> StoredTurn | None:
        async with make_store() as store:
            await store.save(saved)
            return await store.get("resp_1", OWNER_A)

    assert run(scenario) == saved


def test_a_turns_interaction_id_reads_back_in_the_turn_and_its_chain(
    make_store: StoreFactory,
) -> None:
    first = replace(turn("resp_1"), interaction_id="v1_ChdpbnRlcmFjdGlvbi0x")
    second = turn("resp_2", previous="resp_1")

    async def scenario() -> tuple[StoredTurn | None, list[StoredTurn] | None]:
        async with make_store() as store:
            await store.save(first)
            await store.save(second)
            return await store.get("resp_1", OWNER_A), await store.chain("resp_2", OWNER_A)

    got, chain = run(scenario)
    assert got == first
    assert chain is not None
    assert [t.interaction_id for t in chain] == ["v1_ChdpbnRlcmFjdGlvbi0x", None]


def test_missing_and_malformed_ids_are_not_found(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await store.save(turn("resp_1"))
            for turn_id in ["resp_2", *MALFORMED]:
                assert await store.get(turn_id, OWNER_A) is None
                assert await store.delete(turn_id, OWNER_A) is False
                assert await store.input_items(turn_id, OWNER_A) is None
                assert await store.chain(turn_id, OWNER_A) is None
            assert await store.items(["in_0_2", "", "a b", "x" * 129, "k*"], OWNER_A) == {}
            assert await store.get("resp_1", OWNER_A) is not None

    run(scenario)


def test_the_longest_id_is_accepted(make_store: StoreFactory) -> None:
    longest = "resp_" + "a" * 123
    saved = StoredTurn(longest, OWNER_A, 1.0, b"{}", input=(item("i" * 128),))

    async def scenario() -> None:
        async with make_store() as store:
            await store.save(saved)
            assert await store.get(longest, OWNER_A) == saved
            assert list(await store.items(["i" * 128], OWNER_A)) == ["i" * 128]

    run(scenario)


def test_saving_malformed_ids_raises_and_stores_nothing(make_store: StoreFactory) -> None:
    good = turn("resp_1")
    bad = [
        StoredTurn("resp_a b", OWNER_A, 1.0, b"{}"),
        StoredTurn("chatcmpl_1", OWNER_A, 1.0, b"{}"),
        StoredTurn("resp_1", "not-an-owner", 1.0, b"{}"),
        StoredTurn("resp_1", OWNER_A.upper(), 1.0, b"{}"),
        StoredTurn("resp_1", OWNER_A, 1.0, b"{}", previous_id="resp_*"),
        StoredTurn("resp_1", OWNER_A, 1.0, b"{}", input=(item("a b"),)),
        StoredTurn("resp_1", OWNER_A, 1.0, b"{}", output=(item(""),)),
    ]

    async def scenario() -> None:
        async with make_store() as store:
            for record in bad:
                with pytest.raises(InvalidIdError):
                    await store.save(record)
            assert await store.get("resp_1", OWNER_A) is None
            await store.save(good)
            assert await store.get("resp_1", OWNER_A) == good

    run(scenario)


def test_delete_removes_the_turn_and_its_items(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await store.save(turn("resp_1"))
            await store.save(turn("resp_2"))
            assert await store.delete("resp_1", OWNER_A) is True
            assert await store.get("resp_1", OWNER_A) is None
            assert await store.input_items("resp_1", OWNER_A) is None
            assert await store.items(["in_0_1", "out_0_1", "in_0_2"], OWNER_A) == {
                "in_0_2": item("in_0_2")
            }
            assert await store.delete("resp_1", OWNER_A) is False
            assert await store.get("resp_2", OWNER_A) is not None

    run(scenario)


def test_saving_an_id_again_replaces_the_turn(make_store: StoreFactory) -> None:
    first, second = turn("resp_1", inputs=5), turn("resp_1", inputs=1, outputs=0)

    async def scenario() -> None:
        async with make_store() as store:
            await store.save(first)
            await store.save(second)
            assert await store.get("resp_1", OWNER_A) == second
            page = await store.input_items("resp_1", OWNER_A, order="asc")
            assert page == ItemsPage(second.input, has_more=False)

    run(scenario)


def test_one_owner_cannot_reach_anothers_turns(make_store: StoreFactory) -> None:
    mine = turn("resp_1", OWNER_A, previous=None)

    async def scenario() -> None:
        async with make_store() as store:
            await store.save(mine)
            assert await store.get("resp_1", OWNER_B) is None
            assert await store.delete("resp_1", OWNER_B) is False
            assert await store.input_items("resp_1", OWNER_B) is None
            assert await store.input_items("resp_1", OWNER_B, after="in_0_1") is None
            assert await store.items(["in_0_1", "out_0_1"], OWNER_B) == {}
            assert await store.chain("resp_1", OWNER_B) is None
            # and B's turn of the same id is B's own, beside A's
            theirs = turn("resp_1", OWNER_B, inputs=1)
            await store.save(theirs)
            assert await store.get("resp_1", OWNER_B) == theirs
            assert await store.get("resp_1", OWNER_A) == mine
            assert await store.delete("resp_1", OWNER_B) is True
            assert await store.get("resp_1", OWNER_A) == mine

    run(scenario)


def test_owner_ids_come_from_tokens_and_the_stores_secret(make_store: StoreFactory) -> None:
    async def scenario() -> tuple[str, str, str, str]:
        async with make_store() as one, make_store() as two:
            return (
                await one.owner("token-1"),
                await two.owner("token-1"),
                await one.owner("token-2"),
                await make_store(secret=b"s" * 32).owner("token-1"),
            )

    first, again, other, configured = run(scenario)
    assert first == again
    assert len({first, other, configured}) == 3
    assert len(first) == 64
    assert int(first, 16) >= 0


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_input_items_page_through_in_both_orders(make_store: StoreFactory, order: str) -> None:
    saved = turn("resp_1", inputs=45)
    expected = list(saved.input if order == "asc" else reversed(saved.input))

    async def scenario() -> list[ItemsPage]:
        pages: list[ItemsPage] = []
        async with make_store() as store:
            await store.save(saved)
            after = None
            while True:
                page = await store.input_items("resp_1", OWNER_A, after=after, order=order)  # type: ignore[arg-type]
                assert page is not None
                pages.append(page)
                if not page.has_more:
                    return pages
                after = page.last_id

    pages = run(scenario)
    assert [len(page.items) for page in pages] == [20, 20, 5]
    assert [page.has_more for page in pages] == [True, True, False]
    assert [one for page in pages for one in page.items] == expected
    assert pages[0].first_id == expected[0].id


def test_input_items_limits_and_the_default_order(make_store: StoreFactory) -> None:
    saved = turn("resp_1", inputs=5)
    ids = [one.id for one in saved.input]

    async def scenario() -> None:
        async with make_store() as store:
            await store.save(saved)
            await store.save(turn("resp_2", inputs=0))

            async def page_ids(**options: object) -> tuple[list[str], bool]:
                page = await store.input_items("resp_1", OWNER_A, **options)  # type: ignore[arg-type]
                assert page is not None
                return [one.id for one in page.items], page.has_more

            assert await page_ids() == (ids[::-1], False)
            assert await page_ids(limit=5, order="asc") == (ids, False)
            assert await page_ids(limit=4, order="asc") == (ids[:4], True)
            assert await page_ids(limit=1, order="desc") == ([ids[4]], True)
            assert await page_ids(after=ids[2], order="asc") == (ids[3:], False)
            assert await page_ids(after=ids[2], order="desc") == ([ids[1], ids[0]], False)
            assert await page_ids(after=ids[2], limit=1, order="desc") == ([ids[1]], True)
            assert await page_ids(after=ids[4], order="asc") == ([], False)
            assert await page_ids(after=ids[0], order="desc") == ([], False)
            assert await page_ids(limit=100) == (ids[::-1], False)
            empty = await store.input_items("resp_2", OWNER_A)
            assert empty == ItemsPage((), has_more=False)
            assert empty.first_id is None
            for limit in (0, 101, -1, True, 2.5):
                with pytest.raises(InvalidPageError):
                    await store.input_items("resp_1", OWNER_A, limit=limit)  # type: ignore[arg-type]
            with pytest.raises(InvalidPageError):
                await store.input_items("resp_1", OWNER_A, order="up")  # type: ignore[arg-type]
            for cursor in ("out_0_1", "in_0_2", "nope", "a b"):
                with pytest.raises(InvalidPageError):
                    await store.input_items("resp_1", OWNER_A, after=cursor)

    run(scenario)


def test_item_references_resolve_to_the_latest_stored_item(make_store: StoreFactory) -> None:
    first = turn("resp_1")
    shared = item("fc_shared", "first")
    later = item("fc_shared", "later", opaque=b"signature")

    async def scenario() -> None:
        async with make_store() as store:
            await store.save(first)
            await store.save(StoredTurn("resp_2", OWNER_A, 2.0, b"{}", output=(shared,)))
            await store.save(StoredTurn("resp_3", OWNER_A, 3.0, b"{}", input=(later,)))
            found = await store.items(["out_0_1", "in_1_1", "fc_shared", "missing"], OWNER_A)
            assert found == {
                "out_0_1": first.output[0],
                "in_1_1": first.input[1],
                "fc_shared": later,
            }
            assert await store.items(["out_0_1", "out_0_1"], OWNER_A) == {
                "out_0_1": first.output[0]
            }

    run(scenario)


def test_a_chain_gives_the_conversation_oldest_first(make_store: StoreFactory) -> None:
    a = turn("resp_a")
    b = turn("resp_b", previous="resp_a")
    c = turn("resp_c", previous="resp_b")

    async def scenario() -> None:
        async with make_store() as store:
            for each in (a, b, c):
                await store.save(each)
            assert await store.chain("resp_c", OWNER_A) == [a, b, c]
            assert await store.chain("resp_b", OWNER_A) == [a, b]
            assert await store.chain("resp_a", OWNER_A) == [a]
            await store.delete("resp_b", OWNER_A)
            assert await store.chain("resp_c", OWNER_A) is None
            assert await store.chain("resp_a", OWNER_A) == [a]

    run(scenario)


def test_a_chain_from_a_missing_turn_is_none(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store(max_chain=3) as store:
            await store.save(turn("resp_x", previous="resp_never"))
            assert await store.chain("resp_x", OWNER_A) is None
            assert await store.chain("resp_never", OWNER_A) is None

    run(scenario)


def test_a_chain_longer_than_the_limit_raises_saying_so(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store(max_chain=3) as store:
            await store.save(turn("resp_0"))
            for n in range(1, 5):
                await store.save(turn(f"resp_{n}", previous=f"resp_{n - 1}"))
            assert [t.id for t in await store.chain("resp_2", OWNER_A) or []] == [
                "resp_0",
                "resp_1",
                "resp_2",
            ]
            for too_long in ("resp_3", "resp_4"):
                with pytest.raises(ChainTooLongError) as raised:
                    await store.chain(too_long, OWNER_A)
                assert raised.value.limit == 3
                assert "3" in str(raised.value)
                assert await store.get(too_long, OWNER_A) is not None  # still stored
            # another owner's long chain is not found, as any other of its turns
            assert await store.chain("resp_4", OWNER_B) is None

    run(scenario)


def test_bigger_turns_than_the_limits_are_refused(make_store: StoreFactory) -> None:
    small = turn("resp_1", inputs=1, outputs=1)

    async def scenario() -> None:
        async with make_store(max_record_bytes=small.size, max_items=3) as store:
            await store.save(small)
            too_big = StoredTurn("resp_2", OWNER_A, 1.0, b" " * (small.size + 1))
            with pytest.raises(RecordTooLargeError) as raised:
                await store.save(too_big)
            assert (raised.value.size, raised.value.limit) == (small.size + 1, small.size)
            with pytest.raises(RecordTooLargeError) as raised:
                await store.save(turn("resp_3", inputs=2, outputs=2))
            assert (raised.value.size, raised.value.limit, raised.value.what) == (4, 3, "items")
            assert await store.get("resp_2", OWNER_A) is None
            assert await store.get("resp_3", OWNER_A) is None

    run(scenario)


def test_two_store_objects_see_each_others_writes(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as one, make_store() as two:
            await one.save(turn("resp_1"))
            assert await two.get("resp_1", OWNER_A) == turn("resp_1")
            await two.save(turn("resp_2", previous="resp_1"))
            assert [t.id for t in await one.chain("resp_2", OWNER_A) or []] == [
                "resp_1",
                "resp_2",
            ]
            assert await one.delete("resp_2", OWNER_A) is True
            assert await two.get("resp_2", OWNER_A) is None

    run(scenario)


def test_concurrent_operations_on_one_store(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await asyncio.gather(*(store.save(turn(f"resp_{n}")) for n in range(40)))
            got = await asyncio.gather(*(store.get(f"resp_{n}", OWNER_A) for n in range(40)))
            assert got == [turn(f"resp_{n}") for n in range(40)]

    run(scenario)


def test_a_write_outlives_the_store_object_that_made_it(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        first = make_store()
        await first.save(turn("resp_1"))
        await first.aclose()
        async with make_store() as second:
            assert await second.get("resp_1", OWNER_A) == turn("resp_1")

    run(scenario)


def test_many_items_resolve_in_one_call(make_store: StoreFactory) -> None:
    big = turn("resp_big", inputs=700, outputs=0)
    wanted = [one.id for one in big.input] + ["missing"]

    async def scenario() -> dict[str, object]:
        async with make_store() as store:
            await store.save(big)
            return dict(await store.items(wanted, OWNER_A))

    assert run(scenario) == {one.id: one for one in big.input}
