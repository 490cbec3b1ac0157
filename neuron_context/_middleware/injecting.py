"""System injection: persistent context and injection rules in every model call.

:class:`SystemInjectionMiddleware` wires a :class:`~neuron_context.SystemInjector` and a
:class:`~neuron_context.PersistentContext` into the loop: it renders the persistent
context into the system prompt of every call and checks the injector with the agent's
real turn number and the request's real token count, adding what fires to that call
only. Nothing is written into the history, so no compaction can drop or summarize it.

The injector's memory (which rules fired when) is kept per agent, in the agent's state:
it is restored into the injector before each check and saved after it (no ``await`` in
between), so one injector can serve many agents, and the state moves with the agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .._injection.injector import SystemInjector
from .._injection.persistent import PersistentContext
from .._validators import instance_of, optional, string
from .types import AgentMiddleware, ModelRequest

__all__ = ["SystemInjectionMiddleware"]


@attrs.define
class SystemInjectionMiddleware(AgentMiddleware):
    """Adds the rendered ``persistent`` context and what ``injector`` fires to every call.

    Examples:
        >>> from neuron_context import InjectionTrigger, SystemInjector
        >>> injector = SystemInjector()
        >>> injector.add_rule(InjectionTrigger.every_n_turns(10), "Re-read the plan.")
        >>> middleware = SystemInjectionMiddleware(injector=injector)
    """

    injector: SystemInjector | None = attrs.field(
        default=None,
        kw_only=True,
        validator=optional(instance_of(SystemInjector, "a SystemInjector")),
    )
    """Checked before every call with the agent's turn and the request's tokens."""
    persistent: PersistentContext | None = attrs.field(
        default=None,
        kw_only=True,
        validator=optional(instance_of(PersistentContext, "a PersistentContext")),
    )
    """Rendered into every call's system prompt."""
    key: str = attrs.field(
        default="system_injection", kw_only=True, validator=string(nonempty=True)
    )
    """Where the injector's memory is kept in the agent's state."""
    _baseline: dict[str, Any] | None = attrs.field(default=None, init=False, repr=False)

    async def before_model(self, request: ModelRequest) -> None:
        """Extend the system prompt with the persistent context and the fired rules."""
        parts = [request.system_prompt or ""]
        if self.persistent is not None:
            parts.append(self.persistent.render())
        if self.injector is not None:
            parts.extend(self._fire(request))
        request.system_prompt = "\n\n".join(part for part in parts if part) or None

    def _fire(self, request: ModelRequest) -> list[str]:
        injector = self.injector
        assert injector is not None
        context = request.context
        values = context.state.values
        if self._baseline is None:
            self._baseline = injector.state()
        saved = values.get(self.key)
        injector.restore(saved if isinstance(saved, Mapping) else self._baseline)
        tokens = context.count_request(request.messages, request.system_prompt, request.tools)
        fired = injector.check(context.state.turns, tokens)
        values[self.key] = injector.state()
        return fired
