"""``llm`` (Simon Willison's CLI, unchanged) with a tool and a continued conversation through
``rxgem serve``.

``llm`` knows the server as an OpenAI-compatible model (``extra-openai-models.yaml`` in its
``LLM_USER_PATH``, ``supports_tools``). ``llm --functions`` gives it a Python tool: the
model calls it, ``llm`` runs it and sends the result, the model answers; ``llm -c`` then
asks a second question in the same conversation, read back from ``llm``'s log database, so
the first turn's call goes back once more. On both upstreams, in front of a strict
FakeGemini answering as ``gemini-3-flash-preview``. Every call sent back must carry the
signature the fake gave it (see ``clients_harness``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from clients_harness import G3, UPSTREAMS, assert_signatures_kept, model_requests, strict_gateway
from server_harness import TOKEN

pytest.importorskip("llm", reason="llm is missing (pip install llm)")

MODEL_ID = "rxgem-g3"
MODELS_YAML = """\
- model_id: {model_id}
  model_name: {model}
  api_base: {url}/v1
  api_key_name: rxgem
  supports_tools: true
"""
FUNCTIONS = '''
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"18 C and sunny in {city}"
'''


def _llm(home: Path, *args: str) -> str:
    """``llm ARGS`` with its settings and logs in ``home``; its stdout."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    environment["LLM_USER_PATH"] = str(home)
    command = [sys.executable, "-m", "llm", *args, "-m", MODEL_ID, "--key", TOKEN]
    command += ["--functions", FUNCTIONS]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, f"llm exited {result.returncode}:\n{result.stderr}"
    return result.stdout


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_llm_tool_and_continued_conversation_keep_the_signatures(
    upstream: str, tmp_path: Path
) -> None:
    home = tmp_path / "llm"
    home.mkdir()
    with strict_gateway(upstream, tmp_path) as (fake, url):
        models = MODELS_YAML.format(model_id=MODEL_ID, model=G3, url=url)
        (home / "extra-openai-models.yaml").write_text(models, encoding="utf-8")
        first = _llm(home, "prompt", "What is the weather in Paris?")
        second = _llm(home, "prompt", "-c", "And in Rome?")
    assert "get_weather returned" in first, first
    assert "get_weather returned" in second, second
    assert len(model_requests(fake)) == 4
    assert_signatures_kept(fake, replays=4)
