"""The command line, ``neuron-context`` (also ``python -m neuron_context``).

Answers a user's first questions about their own agent's transcripts, offline and with
no API key: where do the tokens go (``count``), what would a stack do to this history
(``compact``), and which stack should my agent use and what will it cost (``simulate``,
a replay of the transcript as an agent loop, stacks side by side, with a plot).

One concept per module: ``app`` (the entry point and exit codes), ``commands`` (the
three commands), ``stdout`` (what they write there: text, standard JSON), ``args`` (the
parser), ``inputs`` (transcripts, counter, summarizer and budget from the arguments),
``spec`` (stack specs for ``--strategy``), ``census`` (``count``'s breakdown), ``diff``
(``compact``'s before/after), ``simulate`` (the replay), ``contenders`` (other
frameworks' context managers in the replay), ``report`` (rich tables) and ``plot``
(matplotlib). Reading and writing transcript files is the formats room's
(``neuron_context.formats``).
rich and matplotlib (the ``cli`` extra) are imported only when a report or plot is made.
"""

from __future__ import annotations

from .app import main

__all__ = ["main"]
