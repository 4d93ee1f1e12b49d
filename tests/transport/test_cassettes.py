"""Cassettes: the transport's ``record=`` writes each exchange with Gemini (request, status,
content type, the response bytes as received) and never a credential; FakeGemini replays a
directory of them by request, a miss naming what was asked and what is there; a recording
that fails never breaks the stream; the marble kit cuts one into a marble source."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
import reactivex
from reactivex import operators as ops

from rxgem import GeminiAPIError, chat_completions, gemini_to_openai
from rxgem.testing import (
    FakeGemini,
    FakeInteraction,
    FakeResponse,
    cassette_marbles,
    event,
    finish,
    run_marbles,
    text,
    text_step,
)
from rxgem.testing._cassettes import CassetteShelf, cassette_events
from rxgem.transport import (
    CassetteDir,
    CassetteError,
    cassette_bytes,
    cassette_json,
    from_gemini,
    from_interactions,
    read_cassette,
)


def _answer(*words: str) -> bytes:
    return b"".join(event(text(w)) for w in words[:-1]) + event(text(words[-1]), finish())


KEY = "AIzaSy-cassette-key-0123456789"
TOKEN = "ya29.cassette-token-abcdef"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def _secretless(path: Path) -> str:
    raw = path.read_text("utf-8")
    for secret in (KEY, TOKEN, KEY[:12], TOKEN[:12]):
        assert secret not in raw
    return raw


def test_from_gemini_records_the_exchange_without_the_key(tmp_path: Path) -> None:
    target = tmp_path / "one.json"
    with FakeGemini(FakeResponse(body=_answer("Hello"), split_at=(5,))) as fake:
        chunks = (
            from_gemini(
                REQUEST,
                model="gemini-2.5-flash",
                api_key=KEY,
                base_url=fake.base_url,
                record=target,
                headers={"x-echo": KEY},
            )
            .pipe(ops.to_list())
            .run()
        )
    _secretless(target)
    cassette = read_cassette(target)
    assert cassette["format"] == "rxgem-cassette/1"
    assert cassette["upstream"] == "generate-content"
    assert cassette["request"]["method"] == "POST"
    assert cassette["request"]["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert cassette["request"]["query"] == {"alt": "sse"}
    assert cassette["request"]["body"] == REQUEST
    assert cassette["response"]["status"] == 200
    assert cassette["response"]["content_type"].startswith("text/event-stream")
    assert cassette["complete"] is True
    assert cassette_bytes(target) == b"".join(chunks) == _answer("Hello")


def test_a_key_in_the_url_or_the_body_or_the_answer_is_redacted(tmp_path: Path) -> None:
    made = cassette_json(
        upstream="generate-content",
        method="post",
        url=f"https://g.example/v1beta/models/m:streamGenerateContent?alt=sse&key={KEY}",
        request_body=json.dumps({"note": f"my key is {KEY}"}).encode(),
        status=400,
        content_type="application/json",
        response=f'{{"error": {{"message": "API key {KEY} not valid"}}}}'.encode(),
        secrets=[KEY],
    )
    raw = json.dumps(made)
    assert KEY not in raw
    assert made["request"]["query"] == {"alt": "sse", "key": "[redacted]"}
    assert made["request"]["body"] == {"note": "my key is [redacted]"}
    binary = cassette_json(
        upstream="interactions",
        method="POST",
        url="http://h/v1beta/interactions",
        request_body=None,
        status=200,
        content_type=None,
        response=b"\xff\xfe" + TOKEN.encode(),
        secrets=[TOKEN],
    )
    assert TOKEN.encode() not in cassette_bytes(binary)
    assert cassette_bytes(binary).startswith(b"\xff\xfe")


def test_an_access_token_never_reaches_the_cassette(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with FakeGemini(
        FakeResponse(status=403, error={"code": 403, "message": f"bad {TOKEN}"})
    ) as fake:
        stream = from_gemini(
            REQUEST,
            model="gemini-2.5-flash",
            access_token=TOKEN,
            base_url=fake.base_url,
            record=seen.append,
        )
        with pytest.raises(GeminiAPIError):
            stream.run()
    assert len(seen) == 1
    assert TOKEN not in json.dumps(seen[0])
    assert seen[0]["response"]["status"] == 403
    assert b"[redacted]" in cassette_bytes(seen[0])


def test_from_interactions_records_the_create_and_replays_it(tmp_path: Path) -> None:
    directory = tmp_path / "tapes"
    body = {"model": "gemini-3-flash-preview", "input": "Hi", "store": False}
    with FakeGemini(interactions=[FakeInteraction(steps=[text_step("Hello")])]) as fake:
        chunks = (
            from_interactions(
                body, api_key=KEY, base_url=fake.base_url, record=CassetteDir(directory)
            )
            .pipe(ops.to_list())
            .run()
        )
    (path,) = directory.iterdir()
    _secretless(path)
    cassette = read_cassette(path)
    assert cassette["upstream"] == "interactions"
    assert cassette["request"]["path"] == "/v1beta/interactions"
    assert cassette["request"]["body"] == {**body, "stream": True}
    assert cassette_bytes(path) == b"".join(chunks)
    with FakeGemini(cassettes=directory) as replay:
        again = (
            from_interactions(body, api_key="other", base_url=replay.base_url)
            .pipe(ops.to_list())
            .run()
        )
    assert b"".join(again) == b"".join(chunks)


def test_fake_gemini_replays_in_turn_and_a_miss_names_both_sides(tmp_path: Path) -> None:
    for n, words in enumerate(("first", "second")):
        made = cassette_json(
            upstream="generate-content",
            method="POST",
            url="http://h/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            request_body=REQUEST,
            status=200,
            content_type="text/event-stream",
            response=_answer(words),
        )
        (tmp_path / f"{n}.json").write_text(json.dumps(made))
    with FakeGemini(cassettes=tmp_path) as fake:
        url = f"{fake.base_url}/models/gemini-2.5-flash:streamGenerateContent"
        # canonical JSON: the key order and spacing of the body do not matter, nor the query
        answers = [
            httpx.post(url, content=b'{ "contents" : [{"parts":[{"text":"Hi"}],"role":"user"}]}')
            for _ in range(3)
        ]
        assert [a.content for a in answers] == [
            _answer("first"),
            _answer("second"),
            _answer("second"),
        ]
        miss = httpx.post(url, json={"contents": []})
    assert miss.status_code == 404
    message = miss.json()["error"]["message"]
    assert "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent" in message
    assert '{"contents":[]}' in message
    assert "0.json" in message
    assert "1.json" in message


def test_a_directory_without_cassettes_or_a_file_that_is_not_one_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(CassetteError, match="no cassettes"):
        CassetteShelf(tmp_path)
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(CassetteError, match="not a cassette"):
        FakeGemini(cassettes=tmp_path)


def test_names_are_the_recorders_and_the_count_is_bounded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = CassetteDir(tmp_path, max_files=2)
    hostile = cassette_json(
        upstream="generate-content",
        method="POST",
        url="http://h/v1beta/models/..%2F..%2Fetc%2Fpasswd:streamGenerateContent",
        request_body={"model": "../../x", "id": "/etc/passwd"},
        status=200,
        content_type=None,
        response=b"",
    )
    with caplog.at_level(logging.WARNING, logger="rxgem.record"):
        for _ in range(4):
            sink(hostile)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2
    assert all(n.endswith("-gc-200.json") and "/" not in n and ".." not in n for n in names)
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "recording stopped" in caplog.records[0].getMessage()


def test_an_unwritable_directory_is_logged_once_and_the_stream_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    sink = CassetteDir(blocker / "sub")  # cannot be made, even by root
    with caplog.at_level(logging.WARNING), FakeGemini() as fake:
        for _ in range(2):
            chunks = (
                from_gemini(
                    REQUEST,
                    model="gemini-2.5-flash",
                    api_key=KEY,
                    base_url=fake.base_url,
                    record=sink,
                )
                .pipe(ops.to_list())
                .run()
            )
            assert chunks
    messages = [r.getMessage() for r in caplog.records if r.name == "rxgem.record"]
    assert len(messages) == 1
    assert "cannot write cassettes" in messages[0]
    assert all(r.exc_info is None for r in caplog.records)


def test_a_failing_callable_is_logged_and_the_stream_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(_: dict[str, Any]) -> None:
        raise OSError(28, "No space left on device")

    with caplog.at_level(logging.WARNING), FakeGemini() as fake:
        chunks = (
            from_gemini(
                REQUEST,
                model="gemini-2.5-flash",
                api_key=KEY,
                base_url=fake.base_url,
                record=broken,
            )
            .pipe(ops.to_list())
            .run()
        )
    assert b"".join(chunks)
    assert any("not recorded" in r.getMessage() for r in caplog.records)
    assert all(r.exc_info is None for r in caplog.records)


def test_a_cassette_becomes_a_marble_test(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    with FakeGemini(FakeResponse(body=_answer("Hello", "world"))) as fake:
        from_gemini(
            REQUEST, model="gemini-2.5-flash", api_key=KEY, base_url=fake.base_url, record=path
        ).run()
    events = cassette_events(path)
    assert b"".join(events) == cassette_bytes(path)
    assert all(e.endswith((b"\n\n", b"\r\n\r\n")) for e in events)
    source, lookup = cassette_marbles(path)
    assert source == "".join(f"-e{n}" for n in range(len(events))) + "-|"
    output = run_marbles(gemini_to_openai(clock=lambda: 0), source, lookup)
    contents = [
        m.value.choices[0].delta.content for m in output if m.kind == "next" and m.value.choices
    ]
    assert "".join(c for c in contents if c) == "Helloworld"
    direct = reactivex.of(cassette_bytes(path)).pipe(gemini_to_openai(clock=lambda: 0))
    assert len(direct.pipe(ops.to_list()).run()) >= 2


def test_the_client_functions_take_record(tmp_path: Path) -> None:
    path = tmp_path / "client.json"
    body = {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "Hi"}]}
    with FakeGemini(FakeResponse(body=_answer("Hello"))) as fake:
        chunks = (
            chat_completions(
                {**body, "stream": True}, api_key=KEY, base_url=fake.base_url, record=path
            )
            .pipe(ops.to_list())
            .run()
        )
    assert chunks
    assert read_cassette(path)["request"]["body"]["contents"][0]["parts"] == [{"text": "Hi"}]
    assert cassette_bytes(path) == _answer("Hello")


def _small(tmp_path: Path) -> dict[str, Any]:
    return cassette_json(
        upstream="generate-content",
        method="POST",
        url="http://h/v1beta/models/m:streamGenerateContent",
        request_body=REQUEST,
        status=200,
        content_type=None,
        response=_answer("Hi"),
    )


def test_a_full_recorder_holds_and_serialises_nothing_of_a_huge_exchange(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Before: each exchange's bytes were held, decoded, scrubbed and serialised, and only
    then was the file limit checked (+300 ms for a huge exchange past the limit)."""
    import tracemalloc

    sink = CassetteDir(tmp_path / "tapes", max_files=1)
    sink(_small(tmp_path))
    piece = event(text("x" * 65_000))
    huge = piece * 512 + event(text("end"), finish())  # 32 MiB

    def peak(record: CassetteDir | None) -> int:
        stream = from_gemini(
            REQUEST, model="gemini-2.5-flash", api_key=KEY, base_url=fake.base_url, record=record
        )
        tracemalloc.start()
        try:
            assert stream.pipe(ops.count()).run() >= 1
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    with (
        FakeGemini(FakeResponse(body=huge, chunk_size=1 << 20)) as fake,
        caplog.at_level(logging.WARNING, logger="rxgem.record"),
    ):
        unrecorded = peak(None)  # the fake's own pieces and the reads: the baseline
        held = peak(sink) - unrecorded
    assert len(list((tmp_path / "tapes").iterdir())) == 1
    assert held < 8 << 20, f"{held / 2**20:.1f} MiB held past the limit"
    assert any("recording stopped" in r.getMessage() for r in caplog.records)


def test_an_exchange_larger_than_the_bytes_left_is_not_held_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = CassetteDir(tmp_path, max_bytes=1 << 20)
    big = event(text("y" * 60_000)) * 40 + event(text("end"), finish())  # 2.4 MB
    with (
        FakeGemini(
            FakeResponse(body=big, chunk_size=1 << 16), FakeResponse(body=_answer("Hi"))
        ) as fake,
        caplog.at_level(logging.WARNING, logger="rxgem.record"),
    ):
        for _ in range(2):
            from_gemini(
                REQUEST, model="gemini-2.5-flash", api_key=KEY, base_url=fake.base_url, record=sink
            ).pipe(ops.count()).run()
    assert len(list(tmp_path.iterdir())) == 1  # the small one, after the big one was left out
    assert sink.files == 1
    assert any("not recorded" in r.getMessage() for r in caplog.records)


def test_the_recorder_scrubs_the_secrets_it_is_given_in_every_form(tmp_path: Path) -> None:
    """A server's client tokens never travel to Gemini in a header, so the exchange alone
    does not know them: the recorder is given them (``secrets=``)."""
    client_token = 'tok-"quoted"-é-0123456789'
    short = "tok"  # shorter than 8: it would take ordinary text with it; not searched for
    sink = CassetteDir(tmp_path, secrets=(client_token, short, KEY))
    said = f"token {client_token} and key {KEY}"
    answer = event(text(said), finish())
    cut = answer.index(b"0123456789")  # the token split across two network pieces
    body = {"contents": [{"role": "user", "parts": [{"text": said}]}]}
    with FakeGemini(FakeResponse(body=answer, split_at=(cut,))) as fake:
        from_gemini(
            body, model="gemini-2.5-flash", api_key=KEY, base_url=fake.base_url, record=sink
        ).pipe(ops.count()).run()
    (path,) = tmp_path.iterdir()
    raw = path.read_text("utf-8")
    for form in (
        client_token,
        json.dumps(client_token)[1:-1],
        json.dumps(client_token, ensure_ascii=False)[1:-1],
        KEY,
    ):
        assert form not in raw
    assert "tok" in raw
    cassette = read_cassette(path)
    assert cassette["request"]["body"]["contents"][0]["parts"][0]["text"] == (
        "token [redacted] and key [redacted]"
    )
    assert b"token [redacted] and key [redacted]" in cassette_bytes(cassette)


def test_recorders_sharing_a_count_file_share_the_limit(tmp_path: Path) -> None:
    """What the workers of one ``rxgem serve`` do: each its own recorder, one count."""
    count = tmp_path / "count"
    workers = [CassetteDir(tmp_path / "tapes", max_files=3, shared=count) for _ in range(2)]
    for turn in range(6):
        workers[turn % 2](_small(tmp_path))
    assert len(list((tmp_path / "tapes").iterdir())) == 3
    assert [w.files for w in workers] == [3, 3]  # each sees the server's count
    alone = CassetteDir(tmp_path / "alone", max_files=3)
    for _ in range(2):
        alone(_small(tmp_path))
    assert alone.files == 2
