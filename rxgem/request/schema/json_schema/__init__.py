"""Target ``json_schema``: the schema as the Gemini API's JSON Schema, a checked deep copy
(``_copy``)."""
