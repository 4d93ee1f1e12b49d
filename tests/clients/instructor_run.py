"""instructor against ``rxgem serve``: run in instructor's own venv by test_clients_instructor.py.

``python instructor_run.py URL TOKEN MODEL MODE`` asks for a ``Weather`` with
``instructor.from_openai(..., mode=MODE)`` and prints what it got as JSON: the objects
(``PARALLEL_TOOLS``: an ``Iterable[Weather]``) and how many times a validator refused one.
The first ``Weather`` is refused once (its validator asks for a reason), so instructor
sends the model's answer back with the error and asks again: a replay of the model's call
in the tool modes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

import instructor
import openai
from pydantic import BaseModel, field_validator

REFUSED: list[str] = []


class Weather(BaseModel):
    """The weather in a city."""

    city: str
    celsius: int

    @field_validator("city")
    @classmethod
    def _refused_once(cls, value: str) -> str:
        if not REFUSED:
            REFUSED.append(value)
            raise ValueError("say which city again, in full")
        return value


def main(url: str, token: str, model: str, mode: str) -> None:
    client = instructor.from_openai(
        openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0, timeout=30),
        mode=instructor.Mode[mode],
    )
    response_model: Any = Iterable[Weather] if mode == "PARALLEL_TOOLS" else Weather
    got = client.chat.completions.create(
        model=model,
        response_model=response_model,
        max_retries=2,
        messages=[{"role": "user", "content": "The weather in Paris, as a Weather."}],
    )
    objects = list(got) if mode == "PARALLEL_TOOLS" else [got]
    print(json.dumps({"objects": [o.model_dump() for o in objects], "refused": len(REFUSED)}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
