"""The transcript formats the command line reads and writes, one codec each.

=================  ====================================================================
``--format``       what the file is
=================  ====================================================================
``openai``         OpenAI Chat Completions messages (:mod:`.chat_codec`)
``anthropic``      Anthropic Messages ``system`` + turns (:mod:`.messages_codec`)
``neuron-context`` our own JSON (:mod:`.native_codec`)
``claude-code``    a Claude Code session, JSONL (:mod:`.claude_code`)
``codex``          a Codex CLI rollout, JSONL (:mod:`.codex_rollout`)
``langchain``      a LangChain ``messages_to_dict`` dump (:mod:`.langchain_dump`)
``pydantic-ai``    a pydantic-ai ``ModelMessagesTypeAdapter`` dump (:mod:`.pydantic_ai_dump`)
``openai-agents``  an Agents SDK session's Responses items (:mod:`.agents_items`)
=================  ====================================================================

None needs its framework installed: every dump is plain JSON, read here.

:func:`detect` orders the codecs by how well a document fits each (:class:`.Fit`), and
the reader tries them in that order, so the error for a file that is none of them says
which formats were tried. :mod:`.lossless` writes any of them back without losing what
the library does not model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .agents_items import AgentsItemsCodec
from .chat_codec import ChatCodec
from .claude_code import ClaudeCodeCodec
from .codec import Codec, Container, Fit, Parsed
from .codex_rollout import CodexRolloutCodec
from .langchain_dump import LangChainDumpCodec
from .lossless import rewrite
from .messages_codec import MessagesCodec
from .native_codec import NativeCodec
from .pydantic_ai_dump import PydanticAIDumpCodec

__all__ = ["CODECS", "Codec", "Container", "Fit", "Parsed", "by_name", "detect", "rewrite"]

CODECS: tuple[Codec, ...] = (
    ChatCodec(),
    MessagesCodec(),
    NativeCodec(),
    ClaudeCodeCodec(),
    CodexRolloutCodec(),
    LangChainDumpCodec(),
    PydanticAIDumpCodec(),
    AgentsItemsCodec(),
)
"""Every codec, in the order detection breaks ties."""


def by_name(name: str) -> Codec:
    """The codec whose ``--format`` value is ``name``."""
    return next(codec for codec in CODECS if codec.name == name)


def detect(
    container: Container, units: Sequence[object], header: Mapping[str, object]
) -> list[Codec]:
    """The codecs to try for a document, most likely first: those that declare or
    recognise it alone when any does, else every one it could be."""
    scored = [
        (codec.fits(units, header), -order, codec)
        for order, codec in enumerate(CODECS)
        if container in codec.containers
    ]
    scored = [entry for entry in scored if entry[0] > Fit.NO]
    scored.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
    if scored and scored[0][0] >= Fit.LIKELY:
        scored = [entry for entry in scored if entry[0] == scored[0][0]]
    return [codec for _, _, codec in scored]
