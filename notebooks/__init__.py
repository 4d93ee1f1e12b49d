"""The narrated notebooks; ``python -m notebooks`` renders them as HTML (see ``render``)."""
