"""What real Responses clients send (``shared/reference/responses-api.md``, "What they
send"), translated with the defaults a server uses, and checked as strict FakeGemini checks
a request (Gemini 3 signature rules included): the Agents SDK's two turns (with history,
and stateless with reasoning items), Codex CLI's two turns, the Vercel AI SDK's
``item_reference``."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from rxgem.core.responses import CarriedSignature, encode_signatures
from rxgem.request import (
    SignatureWarning,
    UnsupportedWarning,
    item_references,
    responses_to_gemini_request,
)
from rxgem.testing import gemini_request_problems

MODEL = "gemini-3-flash-preview"
WEATHER_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}

AGENTS_TURN_1: dict[str, Any] = {
    "model": "gemini-3-flash-preview",
    "stream": True,
    "include": [],
    "instructions": "You are a helpful weather agent.",
    "input": [{"content": "What is the weather in Paris?", "role": "user"}],
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": WEATHER_PARAMS,
            "strict": True,
        }
    ],
}

CALL_SIGNATURE = encode_signatures([CarriedSignature("call", "call_w1", "c2lnbmF0dXJl")])
CALL = {
    "arguments": '{"city": "Paris"}',
    "call_id": "call_w1",
    "name": "get_weather",
    "type": "function_call",
    "id": "fc_1",
    "status": "completed",
}
AGENTS_TURN_2 = {
    **AGENTS_TURN_1,
    "input": [
        {"content": "What is the weather in Paris?", "role": "user"},
        CALL,
        {"call_id": "call_w1", "output": "Sunny, 21C", "type": "function_call_output"},
    ],
}
AGENTS_STATELESS_TURN_2 = {
    **AGENTS_TURN_2,
    "store": False,
    "include": ["reasoning.encrypted_content"],
    "input": [
        {"content": "What is the weather in Paris?", "role": "user"},
        {"id": "rs_1", "summary": [], "encrypted_content": CALL_SIGNATURE, "type": "reasoning"},
        CALL,
        {"call_id": "call_w1", "output": "Sunny, 21C", "type": "function_call_output"},
    ],
}
AGENTS_CHAINED_TURN_2 = {
    **AGENTS_TURN_1,
    "previous_response_id": "resp_1",
    "input": [{"call_id": "call_w1", "output": "Sunny, 21C", "type": "function_call_output"}],
}
AGENTS_CHAIN_HISTORY = [
    {"content": "What is the weather in Paris?", "role": "user"},
    {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": CALL_SIGNATURE},
    CALL,
]


def developer(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": text}],
    }


def said(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}


CODEX_PROMPT = "You are Codex, a coding agent. " * 550  # about 17k characters
CODEX_TOOLS = [
    {
        "type": "function",
        "name": "exec_command",
        "description": "Runs a command in a PTY.",
        "strict": False,
        "parameters": {
            "type": "object",
            "properties": {
                "cmd": {"type": "string", "description": "Shell command to execute."},
                "workdir": {"type": "string"},
                "yield_time_ms": {"type": "number"},
            },
            "required": ["cmd"],
            "additionalProperties": False,
        },
    },
    {
        "type": "function",
        "name": "write_stdin",
        "description": "Writes characters to a session.",
        "strict": False,
        "parameters": {
            "type": "object",
            "properties": {"session_id": {"type": "number"}, "chars": {"type": "string"}},
            "required": ["session_id"],
            "additionalProperties": False,
        },
    },
    {
        "type": "namespace",
        "name": "mcp__docs",
        "description": "Tools of the docs MCP server.",
        "tools": [
            {
                "type": "function",
                "name": "search",
                "description": "Search the docs.",
                "strict": False,
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            }
        ],
    },
    {"type": "web_search", "external_web_access": False},
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "Use the apply_patch tool to edit files.",
        "format": {
            "type": "grammar",
            "syntax": "lark",
            "definition": 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF',
        },
    },
    {"type": "tool_search", "execution": "client", "description": "Find more tools."},
]
CODEX_INPUT_1 = [
    developer(CODEX_PROMPT),
    developer("<permissions instructions>read-only</permissions instructions>"),
    said("user", "<environment_context><cwd>/work</cwd></environment_context>"),
    said("user", "List the files."),
]
CODEX_TURN_1: dict[str, Any] = {
    "model": MODEL,
    "instructions": None,
    "input": CODEX_INPUT_1,
    "tools": CODEX_TOOLS,
    "tool_choice": "auto",
    "parallel_tool_calls": True,
    "reasoning": {"summary": "auto"},
    "store": False,
    "stream": True,
    "include": ["reasoning.encrypted_content"],
    "prompt_cache_key": "0199a0b2-session",
    "client_metadata": {"originator": "codex_exec"},
}
CODEX_SIGNATURES = encode_signatures(
    [CarriedSignature("thought", None, "dGhvdWdodA"), CarriedSignature("call", "call_ls", "Y2FsbA")]
)
CODEX_TURN_2 = {
    **CODEX_TURN_1,
    "input": [
        *CODEX_INPUT_1,
        {
            "type": "reasoning",
            "id": "rs_2",
            "summary": [{"type": "summary_text", "text": "**Listing files**"}],
            "content": None,
            "encrypted_content": CODEX_SIGNATURES,
        },
        {
            "type": "function_call",
            "id": "fc_2",
            "status": "completed",
            "name": "exec_command",
            "arguments": '{"cmd":"ls","workdir":"/work"}',
            "call_id": "call_ls",
        },
        {
            "type": "function_call_output",
            "id": "fco_2",
            "call_id": "call_ls",
            "output": "a.txt\nb.txt",
        },
    ],
}

VERCEL_STORED = {
    "rs_9": {"type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": CALL_SIGNATURE}
}
VERCEL_TURN_2 = {
    "model": MODEL,
    "input": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
        {"type": "item_reference", "id": "rs_9"},
        {**CALL, "id": "fc_9"},
        {"type": "function_call_output", "call_id": "call_w1", "output": '{"sky": "sunny"}'},
    ],
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get the weather.",
            "parameters": {"$schema": "http://json-schema.org/draft-07/schema#", **WEATHER_PARAMS},
            "strict": False,
        }
    ],
    "tool_choice": "auto",
}


def translated(body: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The Gemini request, with the server's default policy; no SignatureWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SignatureWarning)
        result = responses_to_gemini_request(body, **options)
    assert gemini_request_problems(result.gemini, model=result.model) == []
    return result.gemini


@pytest.mark.parametrize(
    "body",
    [AGENTS_TURN_1, AGENTS_STATELESS_TURN_2, CODEX_TURN_2],
    ids=["agents-1", "agents-stateless-2", "codex-2"],
)
def test_each_clients_request_is_one_strict_gemini_takes(body: dict[str, Any]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        translated(body)


def test_agents_sdk_turn_1() -> None:
    gemini = translated(AGENTS_TURN_1)
    assert gemini["systemInstruction"] == {"parts": [{"text": "You are a helpful weather agent."}]}
    assert gemini["contents"] == [
        {"role": "user", "parts": [{"text": "What is the weather in Paris?"}]}
    ]
    (declaration,) = gemini["tools"][0]["functionDeclarations"]
    assert declaration["name"] == "get_weather"
    assert "strict" not in declaration


def test_agents_sdk_turn_2_without_signatures_gets_the_placeholder() -> None:
    with pytest.warns(SignatureWarning):
        result = responses_to_gemini_request(AGENTS_TURN_2)
    assert gemini_request_problems(result.gemini, model=MODEL) == []


def test_agents_sdk_stateless_turn_2_gives_the_signature_back() -> None:
    gemini = translated(AGENTS_STATELESS_TURN_2)
    assert gemini["contents"][1] == {
        "role": "model",
        "parts": [
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_w1"},
                "thoughtSignature": "c2lnbmF0dXJl",
            }
        ],
    }
    assert gemini["contents"][2]["parts"] == [
        {
            "functionResponse": {
                "name": "get_weather",
                "response": {"output": "Sunny, 21C"},
                "id": "call_w1",
            }
        }
    ]


def test_agents_sdk_chained_turn_2_continues_the_history() -> None:
    gemini = translated(AGENTS_CHAINED_TURN_2, history=AGENTS_CHAIN_HISTORY)
    assert gemini == translated(AGENTS_STATELESS_TURN_2)


def test_codex_turn_1_works_under_the_default_policy() -> None:
    with pytest.warns(UnsupportedWarning) as seen:
        result = responses_to_gemini_request(CODEX_TURN_1)  # unsupported="error"
    assert [str(w.message).split(":")[0] for w in seen] == ["tools[4]", "tools[5]"]
    gemini = result.gemini
    assert gemini_request_problems(gemini, model=MODEL) == []
    assert [part["text"][:9] for part in gemini["systemInstruction"]["parts"]] == [
        "You are C",
        "<permissi",
    ]
    assert len(gemini["systemInstruction"]["parts"][0]["text"]) > 17_000
    assert gemini["contents"] == [
        {
            "role": "user",
            "parts": [
                {"text": "<environment_context><cwd>/work</cwd></environment_context>"},
                {"text": "List the files."},
            ],
        }
    ]
    names = [d["name"] for d in gemini["tools"][0]["functionDeclarations"]]
    assert names == ["exec_command", "write_stdin", "mcp__docs.search"]
    assert gemini["tools"][1] == {"googleSearch": {}}
    assert gemini["toolConfig"] == {
        "functionCallingConfig": {"mode": "AUTO"},
        "includeServerSideToolInvocations": True,
    }
    assert gemini["generationConfig"] == {"thinkingConfig": {"includeThoughts": True}}
    assert result.stream is True
    assert result.store is False
    assert result.include == ("reasoning.encrypted_content",)
    assert result.namespaced == {"mcp__docs.search": ("mcp__docs", "search")}
    assert result.echo["tools"] is CODEX_TOOLS


def test_codex_turn_2_gives_the_signatures_back() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        gemini = translated(CODEX_TURN_2)
    assert gemini["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "", "thought": True, "thoughtSignature": "dGhvdWdodA"},
                {
                    "functionCall": {
                        "name": "exec_command",
                        "args": {"cmd": "ls", "workdir": "/work"},
                        "id": "call_ls",
                    },
                    "thoughtSignature": "Y2FsbA",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "exec_command",
                        "response": {"output": "a.txt\nb.txt"},
                        "id": "call_ls",
                    }
                }
            ],
        },
    ]


def test_vercel_item_reference_resolves_to_the_stored_reasoning() -> None:
    assert item_references(VERCEL_TURN_2) == ["rs_9"]
    gemini = translated(VERCEL_TURN_2, resolve=VERCEL_STORED.get)
    assert gemini["contents"][1]["parts"][0]["thoughtSignature"] == "c2lnbmF0dXJl"
    assert gemini["contents"][2]["parts"][0]["functionResponse"]["response"] == {"sky": "sunny"}
    (declaration,) = gemini["tools"][0]["functionDeclarations"]
    assert "$schema" not in declaration["parametersJsonSchema"]
