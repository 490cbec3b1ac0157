"""Serialization and wire formats: our own JSON, OpenAI Chat Completions, Anthropic Messages.

Our format (:func:`to_dict` / :func:`from_dict`, :func:`to_json` / :func:`from_json`)
keeps every field of every block::

    {"format": "neuron-context", "version": 1, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}

Block ``type`` s are ``text``, ``image``, ``document``, ``tool_use``, ``tool_result``,
``thinking``, ``redacted_thinking`` and ``compaction``; their keys are the field names of
the classes. Fields that are ``None`` are left out, every other field is written, and
:func:`from_dict` checks everything (unknown keys included), naming the path of what is
wrong, e.g. ``messages[3].content[1].tool_use_id``.

**OpenAI Chat Completions** (:func:`to_openai` / :func:`from_openai`):

- Content that is one text block is sent as a plain string, no blocks as ``""``, else as
  a list of parts. Images are ``image_url`` parts (a URL, or a ``data:`` URL for data);
  a document given as data is a ``file`` part (``file_data`` as a ``data:`` URL,
  ``filename`` ``"document"`` plus the media type's extension), a text-only document is a
  text part (read back as :class:`~neuron_context.Text`), and one given only by URL cannot
  be sent (:class:`~neuron_context.ConfigurationError`).
- An assistant message's text goes to ``content`` (``null`` when it has only tool
  calls) and its tool uses to ``tool_calls``, after the text: text and calls that were
  interleaved come back text first. The arguments are the input's compact JSON
  (``json.dumps(input, ensure_ascii=False, separators=(",", ":"))``, as models write
  them and as the counting rules price them). :class:`~neuron_context.Thinking` and
  :class:`~neuron_context.RedactedThinking` are not sent: Chat Completions has no
  field for them.
- Each :class:`~neuron_context.ToolResult` is its own ``tool`` message; several text
  items become a list of text parts, none ``""`` (read back as one empty text). Chat
  Completions has no error flag, so an error result is sent as it is and reads back
  with ``is_error=False``. Tool messages cannot hold images, so the images of the
  results of an exchange follow its tool messages in one ``user`` message: for each
  result a text part ``[Images returned by tool call <id>]``, then its images;
  :func:`from_openai` puts such images back into their results.
- A :class:`~neuron_context.Compaction` is a text part ``"[Summary of earlier
  conversation]\\n"`` plus the summary; any text that starts with that line reads back
  as a ``Compaction``.
- :func:`from_openai` makes one message per OpenAI message: ``developer`` is read as
  ``system``, each ``tool`` message is one ``TOOL`` message with one result (as
  :meth:`Message.tool_result <neuron_context.Message.tool_result>` builds them; the
  strategies count results, not messages, and :func:`to_anthropic` groups them again).
  Keys it does not know (``name``, ``refusal``, ``detail``, ...) are ignored; a
  ``refusal`` part reads as text. Arguments that are not a JSON object are kept as
  ``{"_raw": "<the string>"}`` and sent back verbatim; blank arguments read as ``{}``.
- So ``to_openai(from_openai(x)) == x`` except that arguments are re-serialized (JSON
  spacing and escapes may change, ``""`` becomes ``"{}"``), ``developer`` becomes
  ``system``, ignored keys are gone and a file part's name is ``document.pdf``. Chat
  Completions cannot keep ``Image.width``/``height``, a URL image's ``media_type``, a
  document's ``pages`` (or its ``text`` when it has data), reasoning or ``is_error``.

**Anthropic Messages** (:func:`to_anthropic` / :func:`from_anthropic`):

- The system messages before the first other message are joined with ``"\\n\\n"`` into
  the top-level ``system``. A later system message stays where it is, sent as user text
  ``<system-reminder>\\n...\\n</system-reminder>``, so the cached prompt prefix does not
  change when one is added; it reads back as user text.
- ``TOOL`` messages are sent as ``user`` turns of ``tool_result`` blocks (``is_error``
  only when true; empty text is dropped, an empty result is ``""``). Consecutive
  messages of one API role are merged into one turn, with the tool results first.
  Empty text blocks are not sent (the API rejects them), nor are turns left empty.
- Documents are ``base64``, ``url`` or ``text`` (``text/plain``) sources; a URL document
  reads back as ``application/pdf``. Thinking keeps its ``signature``.
- :func:`from_anthropic` makes one message per API message, except that a user message
  with ``tool_result`` blocks becomes one ``TOOL`` message holding all of them, followed
  by a ``USER`` message with the rest of its blocks, if any. Unknown keys (``caller``,
  ``cache_control``, ``citations``) are ignored.
- So ``to_anthropic(from_anthropic(x))`` is ``x`` except that string content becomes a
  list of text blocks (an empty tool result stays ``""``), ``"is_error": false`` and
  ignored keys are gone, empty text blocks are dropped, turns of one role are merged,
  and a list ``system`` becomes one string. The Messages API cannot keep
  ``Image.width``/``height``, a URL image's ``media_type`` or a document's ``pages``.

**Tool definitions** (:func:`tools_to_openai` / :func:`tools_from_openai`,
:func:`tools_to_anthropic` / :func:`tools_from_anthropic`): a
:class:`~neuron_context.ToolDefinition` as a Chat Completions function tool or as a
Messages API client tool; the providers send them this way.

**Transcript files** (:func:`load`, :func:`load_transcripts`, :func:`dumps`,
:func:`dump`): the files agents save, in any of :data:`TRANSCRIPT_FORMATS`, read without
their frameworks installed (every dump is plain JSON)::

    from neuron_context import default_stack
    from neuron_context.formats import dump, load, load_transcripts

    messages = load("~/.claude/projects/app/3f2a.jsonl")    # format detected
    messages = load("run.json", format="langchain")          # or named

    (transcript,) = load_transcripts("session.jsonl")      # with what writing back needs
    compacted = await default_stack(50_000).compact(list(transcript.messages))
    dump(transcript, compacted, "session.compacted.jsonl")  # the same format, losslessly

| ``format`` | what the file is |
| --- | --- |
| ``openai`` | Chat Completions: ``{"messages": [...], "tools": [...]}`` or a bare list |
| ``anthropic`` | Messages API: ``{"system": ..., "messages": [...], "tools": [...]}`` |
| ``neuron-context`` | our JSON (:func:`to_dict`) |
| ``claude-code`` | a Claude Code session, ``~/.claude/projects/<project>/<session>.jsonl`` |
| ``codex`` | a Codex CLI rollout, ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` |
| ``langchain`` | LangChain ``messages_to_dict(messages)`` (a LangGraph state's messages) |
| ``pydantic-ai`` | pydantic-ai ``result.all_messages_json()`` |
| ``openai-agents`` | Agents SDK ``result.to_input_list()`` (Responses input items) |

A file is one JSON document (an object whose ``messages`` is the conversation, or a bare
list), JSONL holding one conversation (a message, row or item per line), or JSONL of
records, one conversation per line: :func:`load` reads a file of one conversation and
refuses a file of several, which :func:`load_transcripts` reads as a list. The format is
detected unless ``format`` names it; a file no reader takes is a
:class:`~neuron_context.ConfigurationError` on one line naming the file, the path of what
is wrong, the format it was read as and every other format tried. What is read is the
conversation as the file holds it: check it with :func:`~neuron_context.validate` (or fix
it with :func:`~neuron_context.repair`) when it may be broken. The reading rules of each
format (which Claude Code rows are the conversation, sub-agents, Codex's own items) are
those of the command line, described in [its Files section](../cli.md#files).

:func:`dumps` gives the text of a :class:`Transcript`'s file with other messages in it,
:func:`dump` writes it to a path whole or not at all (a temporary file renamed over the
target, so the path may be the file read). Nothing the messages did not change is lost:
the messages read come back byte for byte; a message kept is written as the very JSON it
was read from (a Claude Code row's ``uuid``, an item's ``id``, a ``cache_control``
breakpoint); a changed one (a cleared result, a cut text) is written over the JSON it
came from, only what changed replaced; a new one (a summary) is written as the format
writes one. What a compaction returns reads back as exactly the messages written, so
the file counts what they count; messages a format cannot hold as such read back as the
format holds them (an empty text, which Messages API turns drop; two assistant replies
with nothing between them, which Responses items read as one).

**Bad input.** Every reader and writer checks its arguments and raises
:class:`~neuron_context.ConfigurationError` naming what is wrong: a writer given
something other than a list of :class:`~neuron_context.Message` (a wire dict is pointed
to the reader), a ``system`` that is not a ``str``; a reader given something other than
a list of objects, or a field of the wrong type, named by its path. A free-form JSON value
read from the wire (a tool's input or arguments, a tool's schema) may nest at most
:data:`MAX_DEPTH` (100) levels: deeper input is refused with a ``ConfigurationError``
naming its path, never a ``RecursionError``.
"""

from __future__ import annotations

import typing as _typing

from .._exports import lazy as _lazy
from .._exports import publish as _publish
from ._anthropic_messages import SYSTEM_REMINDER, from_anthropic, to_anthropic
from ._common import MAX_DEPTH, SUMMARY_HEADING
from ._native import FORMAT, VERSION, from_dict, from_json, to_dict, to_json
from ._openai_arguments import RAW_ARGUMENTS, arguments_from_openai, arguments_to_openai
from ._openai_chat import TOOL_IMAGES_HEADING, from_openai, to_openai
from ._tool_definitions import (
    tools_from_anthropic,
    tools_from_openai,
    tools_to_anthropic,
    tools_to_openai,
)

if _typing.TYPE_CHECKING:
    from ._transcript_files import TRANSCRIPT_FORMATS, dump, dumps, load, load_transcripts
    from ._transcripts.files import Transcript

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "RAW_ARGUMENTS",
    "SUMMARY_HEADING",
    "SYSTEM_REMINDER",
    "TOOL_IMAGES_HEADING",
    "TRANSCRIPT_FORMATS",
    "VERSION",
    "Transcript",
    "arguments_from_openai",
    "arguments_to_openai",
    "dump",
    "dumps",
    "from_anthropic",
    "from_dict",
    "from_json",
    "from_openai",
    "load",
    "load_transcripts",
    "to_anthropic",
    "to_dict",
    "to_json",
    "to_openai",
    "tools_from_anthropic",
    "tools_from_openai",
    "tools_to_anthropic",
    "tools_to_openai",
]

if not _typing.TYPE_CHECKING:  # the transcript files read the adapters' items: on first use
    __getattr__, __dir__ = _lazy(
        __name__,
        globals(),
        {
            "TRANSCRIPT_FORMATS": "._transcript_files",
            "Transcript": "._transcripts.files",
            "dump": "._transcript_files",
            "dumps": "._transcript_files",
            "load": "._transcript_files",
            "load_transcripts": "._transcript_files",
        },
    )
_publish(__name__, globals(), __all__)
