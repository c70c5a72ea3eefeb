"""Which model a stored conversation talks to: the one it was started with, unless told.

``neta run hello -m X`` stores ``X`` (and its provider, and ``--base-url`` if given) with the
conversation; ``neta run -c …``, ``--session`` and ``neta chat -c`` ask ``X`` again. Flags
given when going on win: ``-m`` alone changes the model, ``--provider`` another provider.
"""

from __future__ import annotations

import dataclasses

from neta.cli.conversations import ModelChoice
from neta.cli.options import AgentOptions
from neta.plugins import NetaPluginManager
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.runtime.agent import Agent


def keep_model(
    options: AgentOptions, stored: ModelChoice | None, pm: NetaPluginManager
) -> AgentOptions:
    """The options a stored conversation goes on with: its model, unless the flags name another.

    ``-m`` alone changes the model and keeps the provider (and the base URL); a provider
    named by ``--provider``, ``--script`` or a ``provider:`` prefix other than the stored one
    leaves the stored model out. ``--base-url`` wins over the stored one.
    """
    if stored is None:
        return options
    named, _ = resolve_model_name(options.provider, options.model, pm)
    if named is not None and named != stored.provider:
        return options
    return dataclasses.replace(
        options,
        provider=stored.provider,
        model=options.model or stored.model,
        base_url=options.base_url or stored.base_url or None,
    )


def model_choice(options: AgentOptions, agent: Agent, pm: NetaPluginManager) -> ModelChoice:
    """The model ``agent`` talks to, as a conversation stores it.

    A model left to the provider's default (its environment variable, say) is stored by the
    name the provider chose, so that going on with the conversation asks the same one.
    """
    named, _ = resolve_model_name(options.provider, options.model, pm)
    default = getattr(agent.provider, "model", "")
    model = agent.model or (default if isinstance(default, str) else "")
    return ModelChoice.of(named or DEFAULT_PROVIDER, model, options.base_url)
