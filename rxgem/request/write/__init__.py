"""The writers: the typed form (:mod:`rxgem.request.form`) on the wire.

:mod:`.generate_content` writes a ``GenerateContentRequest`` (``contents``,
``systemInstruction``, ``tools``, ``toolConfig``, ``generationConfig``);
:mod:`.interactions` an Interactions create body's ``input`` steps, ``tools``,
``generation_config`` and ``response_format``.
"""
