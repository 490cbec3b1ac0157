"""The package logger, ``neuron_context``, and the one record every compaction writes.

A :class:`logging.NullHandler` is attached, as the logging HOWTO asks of libraries: an
application that never configured logging gets no "No handlers could be found" noise
and no stray warnings on stderr; one that did sees every record.

Each compaction logs one INFO line (strategy, messages and tokens before and after, with
the same figures in ``extra=`` for structured handlers) and, at DEBUG, its details.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._counting.counter import BaseCounter
    from ._messages.message import Message

__all__ = ["log_compaction", "logger"]

logger = logging.getLogger("neuron_context")
logger.addHandler(logging.NullHandler())


def log_compaction(
    strategy: str,
    counter: BaseCounter,
    before: Sequence[Message],
    after: Sequence[Message],
    details: Mapping[str, object],
) -> None:
    """Log what a compaction did: INFO for the summary line, DEBUG for the details."""
    if not logger.isEnabledFor(logging.INFO):
        return
    before_tokens = counter.estimate_messages(before)
    after_tokens = counter.estimate_messages(after)
    logger.info(
        "%s: %d -> %d messages, %d -> %d tokens",
        strategy,
        len(before),
        len(after),
        before_tokens,
        after_tokens,
        extra={
            "strategy": strategy,
            "messages_before": len(before),
            "messages_after": len(after),
            "tokens_before": before_tokens,
            "tokens_after": after_tokens,
            **{f"nc_{key}": value for key, value in details.items()},
        },
    )
    if details and logger.isEnabledFor(logging.DEBUG):
        logger.debug(
            "%s details: %s",
            strategy,
            ", ".join(f"{key}={value!r}" for key, value in details.items()),
        )
