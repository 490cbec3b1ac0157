"""neuron-context's own JSON: ``{"format": "neuron-context", "version": 1, "messages": [...]}``.

Read with :func:`~neuron_context.formats.from_dict` and written with
:func:`~neuron_context.formats.to_dict`: the format keeps every field, so a message is
one unit and nothing needs grafting; the record's other top-level fields stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..._messages.message import Message
from .._native import FORMAT, VERSION, from_dict, to_dict
from .chat_codec import declared
from .codec import Codec, Fit, Parsed

__all__ = ["NativeCodec"]


class NativeCodec(Codec):
    """neuron-context JSON."""

    name = "neuron-context"
    title = "neuron-context JSON"

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        return Fit.DECLARED if declared(header, FORMAT) else Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        version = header.get("version", VERSION)
        messages = from_dict({"format": FORMAT, "version": version, "messages": list(units)})
        return Parsed(tuple(messages), tuple((i,) for i in range(len(messages))))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        rendered = to_dict(messages)["messages"]
        assert isinstance(rendered, list)  # to_dict writes a list
        return list(rendered)
