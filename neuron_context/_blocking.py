"""Running a coroutine to completion from synchronous code, whatever the caller's thread.

Frameworks call sync hooks (LangChain's ``invoke``) and users call ``run_sync``; the
library's work is async. :func:`run_blocking` runs one coroutine function: on a fresh
event loop when the thread has none, and through an anyio blocking portal (a loop in a
worker thread) when the thread is already inside one (a notebook calling
``agent.invoke``), where a nested ``anyio.run`` would fail.

The result travels through a box, so the run's main task itself returns ``None``. When
an asyncio run ends, Python formats its main task, result included (the SIGINT handler
it restores is shown with ``%r``); a result that holds a history (an agent's result, a
framework's request) would be formatted whole on every call.

The library's own context variables (the conversation a store is scoped to, the
compaction being offloaded: their names start with ``neuron_context_``) are carried
into the coroutine, also across the portal's thread, which does not inherit them.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.from_thread

__all__ = ["in_event_loop", "run_blocking"]

T = TypeVar("T")


def in_event_loop() -> bool:
    """Whether the calling thread is running an asyncio or trio event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        trio = sys.modules.get("trio")
        return bool(trio is not None and trio.lowlevel.in_trio_run())
    return True


def run_blocking(function: Callable[[], Awaitable[T]], *, backend: str = "asyncio") -> T:
    """Run the async ``function`` to completion and return its result (see the module).

    ``backend`` chooses the event loop of a fresh run (``"asyncio"`` or ``"trio"``); a
    caller already inside an event loop gets a portal in a worker thread instead.
    """
    box: list[T] = []
    carried = [
        (variable, value)
        for variable, value in contextvars.copy_context().items()
        if variable.name.startswith("neuron_context_")
    ]

    async def call() -> None:
        for variable, value in carried:
            variable.set(value)
        box.append(await function())

    if not in_event_loop():
        anyio.run(call, backend=backend)
    else:
        with anyio.from_thread.start_blocking_portal(backend) as portal:
            portal.call(call)
    return box[0]
