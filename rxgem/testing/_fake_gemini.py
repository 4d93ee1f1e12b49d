"""FakeGemini: Gemini's streaming endpoint, with injected faults, on a loopback server.

The HTTP/1.1 plumbing (threads, sockets, request parsing, waits that notice a
client going away) is :mod:`._loopback_http`, and what to send is described by
:class:`FakeResponse` (:mod:`._fake_response`). This module decides how to
answer: the routing, one response per request, its framing, delays, pauses,
keep-alive comments, drops and errors, and the counts tests wait on.
``Connection: close`` is sent only when the connection is about to be closed (the
client asked for it, an HTTP/1.0 client, or a malformed request). In strict mode, a
request Gemini would refuse (:mod:`._gemini_validation`) gets Google's 400 instead.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from .. import samples
from ._cassettes import CassetteShelf
from ._fake_interactions import DEFAULT_AGENTS, InteractionsRoutes, Script
from ._fake_models import MODELS, is_model_route, model_answer
from ._fake_response import FakeResponse, as_responses, response_fields
from ._fake_scenarios import Scenarios
from ._fake_signatures import SignatureBook, signature_check
from ._gemini_validation import gemini_request_problems, invalid_argument
from ._http_wire import LAST_CHUNK, Request, chunk, chunk_head, response_head
from ._interactions_validation import check_interaction_body
from ._loopback_http import ClientGone, Connection, LoopbackServer, ServerClosing, poll
from ._received import ReceivedRequest

if TYPE_CHECKING:
    from ._loopback_h2 import LoopbackH2Server

__all__ = ["FakeGemini", "FakeResponse", "ReceivedRequest"]

_STREAM_PATH: Final = re.compile(r"/v1beta/models/([^/]+):streamGenerateContent")
_GENERATE: Final = re.compile(r"/v1beta/models/([^/]+):(streamGenerateContent|generateContent)")
_BLANK_LINE_ENDS: Final = (b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n", b"\r\n\n", b"\r\r\n")
_KEEPALIVE_CHUNK: Final = chunk(b": keep-alive\n\n")


def _head(
    response: FakeResponse,
    framing: Literal["chunked", "length", "close"],
    size: int,
    keep_alive: bool,
) -> bytes:
    """The status line and headers of ``response``."""
    return response_head(response._status(), response_fields(response, framing, size, keep_alive))


def _google_error(code: int, message: str) -> FakeResponse:
    names = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 431: "INVALID_ARGUMENT"}
    return FakeResponse(
        status=code,
        error={"code": code, "message": message, "status": names.get(code, "UNIMPLEMENTED")},
    )


# --------------------------------------------------------------------------- the server


class FakeGemini:
    """A real HTTP/1.1 server on 127.0.0.1 that serves Gemini's streaming endpoint.

    It answers ``POST /v1beta/models/{model}:streamGenerateContent`` (any query)
    with the given responses: one per such request, in order, the last one
    repeating; ``GET /v1beta/models`` and ``GET /v1beta/models/{model}`` with
    Gemini's model list (``models``, one page) and model (uses up no response). Any
    other method or path gets a Google-style 404 JSON error (and uses up no response).
    Every request is recorded in :attr:`requests` before it is answered. Connections are
    kept alive between requests. With no ``responses``, it answers as Gemini would
    (:mod:`._fake_scenarios`), and an unknown model gets Gemini's 404 on every route.

    Args:
        *responses: ``FakeResponse`` objects, or bytes (``FakeResponse(body=...)``).
            With none, scenarios answer (above); given, they win, for any model name.
        scenario: one scenario for every answer: a name of :data:`SCENARIOS` or a file
            (see :func:`~rxgem.testing._fake_scenarios.load_scenario`).
        backlog: the listen queue (default 128); raise it when a test opens
            hundreds of connections at once, or some of them are refused.
        strict: check each request body as Gemini does, with the rules of the model the
            URL names (:func:`~rxgem.testing.gemini_request_problems`: thought signatures
            of the current turn on Gemini 3, one function response per call, no call ids
            on Gemini 2.x, schema keywords Gemini refuses, ...). A request Gemini would
            refuse is recorded and answered with Google's 400 ``INVALID_ARGUMENT`` error
            (its ``message`` worded like Google's), and uses up no response: the next
            valid request gets the response it would have got. Interactions create
            bodies are checked too (see ``interaction_check``).
        models: the model ids ``GET /v1beta/models`` lists (default
            :attr:`DEFAULT_MODELS`).
        http2: speak cleartext HTTP/2 with prior knowledge (h2c) instead of HTTP/1.1,
            for ``httpx.AsyncClient(http2=True, http1=False)`` (needs the ``h2``
            package: ``pip install 'rxgem[http2]'``). Many requests share one
            connection, each on its own stream (up to 1,000 at once); a response is the
            same body in DATA frames, one frame per piece; ``drop_after`` resets the
            stream (``RST_STREAM``) instead of closing the connection, and a client
            resetting a stream counts as a disconnect.
        interactions: the runs of the Interactions API, one per ``POST
            /v1beta/interactions``, in order, the last one repeating
            (:class:`FakeInteraction`, a :class:`FakeResponse` sent as is, or a function
            of the :class:`InteractionCall` returning either); see
            :mod:`rxgem.testing._fake_interactions` for the routes (create, get, resume
            with ``last_event_id``, cancel, delete, background runs, ``store: false``,
            ``previous_interaction_id``). These requests use up no ``responses``.
        agents: the agents a create body may name instead of a model.
        interaction_check: a check of each Interactions create body (returns problems); a
            body with problems gets Google's 400 ``INVALID_ARGUMENT`` and uses up no run.
            With ``strict`` and no check given: :func:`check_interaction_body`; strict,
            the thought signatures are judged after it (below).
        cassettes: a directory of cassettes (docs/testing.md) to replay: a ``POST``
            matching one (method, path, query without credentials, canonical JSON body;
            then without the query) gets its recorded status, content type and bytes; a
            ``POST`` matching none gets a 404 naming the request and the cassettes there.
            Other requests (the model list) are answered as usual.

    Thought signatures (:mod:`._fake_signatures`): the scenarios sign their calls, texts
    and thoughts with signatures no one else can make, bound to the part and the model;
    signatures in scripted bodies count as issued once sent. Strict, on a Gemini 3
    model, a signature the fake did not issue for that part and model gets Google's 400
    ``Corrupted thought signature.`` on any turn, and a current-turn call without one
    Google's missing-signature 400 (Interactions: without ``previous_interaction_id``).
    Strict or not, thread-safe counts tell what came back: :attr:`placeholder_signatures`
    (calls carrying one of Google's dummies, ``skip_thought_signature_validator`` or
    ``context_engineering_is_the_way_to_go``, accepted as Google does),
    :attr:`lost_signatures` (calls the fake signed that came back bare, on any turn),
    :attr:`signature_problems` (a line per finding, those two and bad signatures).

    Example (strict)::

        with FakeGemini(samples.read("text"), strict=True) as fake:
            url = f"{fake.base_url}/models/gemini-2.5-flash:streamGenerateContent"
            refused = httpx.post(url, json={"contents": []})
            assert refused.status_code == 400  # "contents is not specified", as Google says
            hello = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
            assert httpx.post(url, json=hello).content == samples.read("text")
    """

    DEFAULT_MODELS: Final = MODELS
    """The models listed unless ``models`` says otherwise."""

    def __init__(
        self,
        *responses: FakeResponse | bytes,
        backlog: int = 128,
        strict: bool = False,
        http2: bool = False,
        models: Sequence[str] = MODELS,
        interactions: Sequence[Script] = (),
        agents: Sequence[str] = DEFAULT_AGENTS,
        interaction_check: Callable[[Any], Sequence[str]] | None = None,
        cassettes: str | os.PathLike[str] | None = None,
        scenario: str | os.PathLike[str] | None = None,
    ) -> None:
        items = as_responses(responses)
        self._cassettes = CassetteShelf(cassettes) if cassettes is not None else None
        self._responses = items or (FakeResponse(body=samples.read("text")),)
        self._scripted = bool(items)
        self._signatures = book = SignatureBook()
        self._scenarios = Scenarios(scenario, models=models, signatures=book)
        self._strict = bool(strict)
        self._models = tuple(models)
        if interaction_check is None and self._strict:
            interaction_check = check_interaction_body
        interactions = interactions or (self._scenarios.interaction,)
        self._interactions = InteractionsRoutes(
            interactions,
            models=self._models,
            agents=agents,
            check=signature_check(interaction_check, book, strict=self._strict),
            observe=book.served_steps,
        )
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._requests: list[ReceivedRequest] = []
        self._served = 0
        self._disconnects = 0
        self._completed = 0
        self._body_bytes_sent = 0
        self._server: LoopbackServer | LoopbackH2Server
        if http2:
            from ._fake_gemini_h2 import LoopbackH2Server, answer  # needs the h2 package

            self._server = LoopbackH2Server(
                lambda stream, request: answer(self, stream, request),
                name="FakeGemini",
                backlog=backlog,
            )
        else:
            self._server = LoopbackServer(
                self._handle, self._reject, name="FakeGemini", backlog=backlog
            )

    def __repr__(self) -> str:
        port = self._server.bound_port
        where = f" port={port}" if port is not None else ""
        return f"<FakeGemini {self._server.state}{where} requests={len(self._requests)}>"

    # -- properties

    @property
    def port(self) -> int:
        """The TCP port (valid after :meth:`start`)."""
        return self._server.port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1beta``: the API root, as a client's base URL."""
        return f"http://127.0.0.1:{self.port}/v1beta"

    @property
    def requests(self) -> list[ReceivedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def strict(self) -> bool:
        """Whether requests Gemini would refuse get Google's 400 (see the ``strict`` argument)."""
        return self._strict

    @property
    def placeholder_signatures(self) -> int:
        """Calls that came back with one of Google's dummy signatures (see the class doc)."""
        return self._signatures.placeholders

    @property
    def lost_signatures(self) -> int:
        """Calls the fake signed that came back without a signature (see the class doc)."""
        return self._signatures.lost

    @property
    def signature_problems(self) -> list[str]:
        """What the fake noticed about signatures, one line each (see the class doc)."""
        return self._signatures.problems

    @property
    def disconnects(self) -> int:
        """How many responses were cut short by the client going away."""
        with self._lock:
            return self._disconnects

    @property
    def completed(self) -> int:
        """How many responses were sent completely (404s and errors included)."""
        with self._lock:
            return self._completed

    @property
    def body_bytes_sent(self) -> int:
        """How many body bytes all responses have handed to the kernel so far.

        It stops growing when a client stops reading (once the socket buffers are
        full): the way to see backpressure from outside the client.
        """
        with self._lock:
            return self._body_bytes_sent

    def wait_for_disconnect(self, timeout: float, count: int = 1) -> bool:
        """Wait until ``count`` responses were cut short by the client going away.

        A client going away (closing its socket) before a response was fully sent,
        including during ``delay``, is noticed at once, also during a ``pause``.
        Returns False if that did not happen within ``timeout`` seconds.
        """
        with self._changed:
            return self._changed.wait_for(lambda: self._disconnects >= count, timeout)

    async def await_for_disconnect(self, timeout: float, count: int = 1) -> bool:
        """:meth:`wait_for_disconnect` for async code: awaits, the loop runs on meanwhile."""
        return await poll(self._changed, lambda: self._disconnects >= count, timeout)

    def interaction(self, interaction_id: str) -> dict[str, Any] | None:
        """The stored interaction as ``GET /v1beta/interactions/{id}`` shows it now, or
        None (never created, ``store: false``, or deleted)."""
        return self._interactions.snapshot(interaction_id)

    @property
    def interaction_ids(self) -> list[str]:
        """The ids of the stored interactions, oldest first."""
        return self._interactions.run_ids()

    # -- lifecycle

    def start(self) -> FakeGemini:
        """Bind an ephemeral port on 127.0.0.1 and start serving (no-op if running)."""
        self._server.start()
        return self

    def close(self) -> None:
        """Stop serving, close every socket and join every thread. Idempotent."""
        self._server.close()

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> FakeGemini:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()  # quick: every server thread wakes up at once and exits

    # -- bookkeeping (called from connection threads)

    def _record(self, request: ReceivedRequest, *, serve: bool) -> FakeResponse | None:
        """Log a request; with ``serve``, also take the response for it."""
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
            if not serve:
                return None
            response = self._responses[min(self._served, len(self._responses) - 1)]
            self._served += 1
            return response

    def _finished(self, *, completed: bool, disconnected: bool = False, undo: bool = False) -> None:
        """Count a response as completed or cut short (``undo`` retracts a completion)."""
        with self._changed:
            self._completed += completed - undo
            self._disconnects += disconnected
            self._changed.notify_all()

    # -- answering (called from connection threads)

    def _handle(self, conn: Connection, request: Request) -> bool:
        """Route and answer one request; True if the connection stays open."""
        response = self._route(request)
        tokens = {t.strip().lower() for t in request.headers.get("connection", "").split(",")}
        keep_alive = request.version != "HTTP/1.0" and "close" not in tokens
        return self._respond(
            conn,
            response,
            keep_alive=keep_alive,
            head_only=request.method == "HEAD",
            http10=request.version == "HTTP/1.0",
        )

    def _route(self, request: Request) -> FakeResponse:
        """Record ``request`` and choose its answer (the next response, a 400 or a 404)."""
        split = urlsplit(request.target)
        path = unquote(split.path)
        received = ReceivedRequest(
            method=request.method,
            path=path,
            query=dict(parse_qsl(split.query, keep_blank_values=True)),
            headers=dict(request.headers),
            body=request.body,
        )
        generate = _GENERATE.fullmatch(path) if request.method == "POST" else None
        refusal = None
        if generate is not None:  # counted always, refused when strict (not cassettes)
            strict = self._strict and self._cassettes is None
            refusal = self._signatures.refusal(request.body, generate[1], strict=strict)
        if self._cassettes is not None and request.method == "POST":
            self._record(received, serve=False)
            with self._lock:
                replay = self._cassettes.answer(request.method, path, received.query, request.body)
            if replay is not None:
                self._signatures.served(replay.body)
                return replay
            return _google_error(404, self._cassettes.miss(request.method, path, request.body))
        if self._interactions.handles(path):
            self._record(received, serve=False)
            answer = self._interactions.answer(request.method, path, received.query, request.body)
            self._signatures.served(answer.body)
            return answer
        if is_model_route(request.method, path):
            self._record(received, serve=False)
            return model_answer(path, self._models)
        if generate is not None and not self._scripted:  # answered from scenarios
            self._record(received, serve=False)
            model, method = generate[1], generate[2]
            answer = refusal or self._scenarios.answer(
                model, method, request.body, strict=self._strict
            )
            self._signatures.served(answer.body)
            return answer
        route = _STREAM_PATH.fullmatch(path) if request.method == "POST" else None
        refusal = refusal if route is not None else None
        if route is not None and self._strict and refusal is None:
            problems = gemini_request_problems(request.body, model=route.group(1))
            if problems:
                refusal = FakeResponse(status=400, error=invalid_argument(problems))
        response = self._record(received, serve=route is not None and refusal is None)
        if refusal is not None:
            response = refusal
        elif response is None:
            response = _google_error(
                404,
                f"FakeGemini serves only POST /v1beta/models/{{model}}:streamGenerateContent,"
                f" not {request.method} {path}.",
            )
        else:
            self._signatures.served(response.body)
        return response

    def _reject(self, conn: Connection, status: int, message: str) -> None:
        """Answer a request that could not be parsed (the connection closes after it)."""
        self._respond(conn, _google_error(status, message), keep_alive=False)

    def _respond(
        self,
        conn: Connection,
        response: FakeResponse,
        *,
        keep_alive: bool,
        head_only: bool = False,
        http10: bool = False,
    ) -> bool:
        """Send one response; True if the connection stays open.

        A response counts as completed just before its last write (so a client that
        has read it all can rely on ``completed``); if that write fails after all,
        it counts as a disconnect instead.
        """
        counted = False

        def last_write_next() -> None:
            nonlocal counted
            self._finished(completed=True)
            counted = True

        try:
            if response.delay > 0:
                conn.idle(response.delay)
            pieces = response._pieces()
            framing: Literal["chunked", "length", "close"]
            if not response._is_stream():
                framing = "length"
            elif http10:
                framing = "close"
            else:
                framing = "chunked"
            keep_alive = keep_alive and framing != "close"
            for name, value in response.headers.items():
                if name.lower() == "connection" and value.strip().lower() == "close":
                    keep_alive = False
            drop_after = response.drop_after
            head = _head(response, framing, sum(map(len, pieces)), keep_alive)
            if head_only or (not pieces and framing != "chunked" and drop_after is None):
                last_write_next()
            conn.send(head)
            if head_only:
                return keep_alive
            sent = 0
            tail = b""  # the last body bytes sent: comments go only between events
            for number, piece in enumerate(pieces):
                if number and response.pause > 0:
                    between_events = tail.endswith(_BLANK_LINE_ENDS)
                    every = response.keepalive if framing == "chunked" and between_events else None
                    conn.idle(response.pause, every=every, heartbeat=_KEEPALIVE_CHUNK)
                if conn.closing:
                    raise ServerClosing
                if drop_after is not None and sent + len(piece) > drop_after:
                    # Cut this piece short (the chunk size line promises all of it).
                    data = piece[: drop_after - sent]
                    if data:
                        conn.send(chunk_head(piece) + data if framing == "chunked" else data)
                    break
                if number == len(pieces) - 1 and framing != "chunked" and drop_after is None:
                    last_write_next()
                conn.send(chunk(piece) if framing == "chunked" else piece)
                sent += len(piece)
                with self._lock:
                    self._body_bytes_sent += len(piece)
                tail = (tail + piece)[-4:]
            if drop_after is not None:
                return False
            if framing == "chunked":
                last_write_next()
                conn.send(LAST_CHUNK)
        except ClientGone:
            self._finished(completed=False, disconnected=True, undo=counted)
            return False
        except ServerClosing:
            self._finished(completed=False, undo=counted)
            raise
        return keep_alive
