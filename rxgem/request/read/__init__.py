"""The readers: an OpenAI request into the typed form (:mod:`rxgem.request.form`).

:mod:`.chat` reads a Chat Completions body, :mod:`.responses` a Responses body (with the
history its caller resolved); each makes a ``Conversation`` and ``Settings``. What both
check alike (function names and schemas, thinking by model family) is in ``_shared``.
"""
