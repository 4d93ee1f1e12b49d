"""The Chat Completions output: items → :class:`~rxgem.core.ChatCompletionChunk`.

:class:`~rxgem.core.ChunkBuilder`, the chat models, their SSE framing
(:class:`~rxgem.core.SSEEncoder`) and :class:`~rxgem.core.ChunkAccumulator` (the ``openai``
SDK's merge of chunks into a message).
"""
