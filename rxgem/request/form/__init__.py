"""The typed form between the readers and the writers: the conversation (``Conversation``:
turns of texts, media, calls, results and kept parts, with their thought signatures) and
the settings (``Settings``: tools, their choice, sampling, limits, the answer's format,
thinking), msgspec structs. Both readers make them; both writers take them."""

from ._conversation import Call as Call
from ._conversation import Conversation as Conversation
from ._conversation import Kept as Kept
from ._conversation import Media as Media
from ._conversation import Part as Part
from ._conversation import Result as Result
from ._conversation import Text as Text
from ._conversation import Turn as Turn
from ._conversation import merge_turns as merge_turns
from ._conversation import place_signatures as place_signatures
from ._conversation import signature_of as signature_of
from ._settings import Function as Function
from ._settings import Mode as Mode
from ._settings import Settings as Settings
from ._settings import Thinking as Thinking
from ._settings import Tools as Tools
