"""The Chat Completions output: items → :class:`~rxgem.core.ChatCompletionChunk`.

:class:`~rxgem.core.ChunkBuilder`, the Gemini → OpenAI field mapping
(:func:`~rxgem.core.map_finish_reason`, :func:`~rxgem.core.map_usage`,
:func:`~rxgem.core.map_logprobs`; the Responses output maps through it too), the chat
models, their SSE framing (:class:`~rxgem.core.SSEEncoder`) and
:class:`~rxgem.core.ChunkAccumulator` (the ``openai`` SDK's merge of chunks).
"""
