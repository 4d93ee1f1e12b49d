"""The Responses output: items → Responses events, with what only it uses.

``ResponsesBuilder`` (its output items in ``_output_items``), the Responses models, their
SSE framing, the assembled ``Response`` and the reasoning carrier (Gemini's thought
signatures in a reasoning item's ``encrypted_content``, read back by :mod:`rxgem.request`).
"""
