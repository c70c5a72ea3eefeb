"""Toolsets and the one function that decides which of them a session gets, and why."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from neta.errors import ConfigError
from neta.suggest import close_names, unknown_name_message

__all__ = [
    "TOOLSET_DEFAULTS",
    "ToolsetDecision",
    "ToolsetResolution",
    "ToolsetSpec",
    "resolve_toolsets",
]

TOOLSET_DEFAULTS = ("base", "planning", "interaction")
"""The built-in toolsets every session gets unless a host or user says otherwise."""

_DISPLAY_ORDER = (*TOOLSET_DEFAULTS, "memory", "skill", "crew")


class ToolsetSpec(BaseModel):
    """A named group of tools, announced by a plugin.

    Attributes:
        name: the toolset name (also the plugin's entry-point name for built-ins).
        description: one line shown by ``neta toolsets``.
        default: on unless excluded; ``False`` means only when requested.
        requires: a session capability (see ``SessionContext.capabilities``) without which the
            toolset is off whatever was asked, e.g. ``"crew_runner"``.
        unavailable: why the toolset cannot be used at all right now (a server that did not
            start, a configuration that turns it off); empty when it can. A toolset with a
            reason here is off whatever was asked, and the reason is what ``neta toolsets``
            shows.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    default: bool = True
    requires: str | None = None
    unavailable: str = ""


@dataclass(frozen=True)
class ToolsetDecision:
    """Whether one toolset is on for a session, and the reason in words."""

    name: str
    enabled: bool
    reason: str


@dataclass(frozen=True)
class ToolsetResolution:
    """The decision for every known toolset, in display order."""

    decisions: tuple[ToolsetDecision, ...]

    @property
    def enabled(self) -> tuple[str, ...]:
        """The names of the toolsets that are on."""
        return tuple(d.name for d in self.decisions if d.enabled)

    def decision(self, name: str) -> ToolsetDecision:
        """The decision about toolset ``name``."""
        for found in self.decisions:
            if found.name == name:
                return found
        raise ConfigError(unknown_name_message("toolset", name, (d.name for d in self.decisions)))


def resolve_toolsets(
    specs: Sequence[ToolsetSpec],
    *,
    preset: Iterable[str] | None = None,
    requested: Iterable[str] = (),
    denied: Iterable[str] = (),
    capabilities: Iterable[str] = (),
) -> ToolsetResolution:
    """Decide which toolsets a session gets.

    In order: the specs marked ``default`` (or, when a host gives a ``preset``, exactly the
    preset instead) → plus ``requested`` → minus ``denied`` (deny wins) → minus any toolset
    whose required capability is not in ``capabilities`` → minus any toolset that says it is
    ``unavailable``. Unknown names raise ``ConfigError``.
    """
    by_name = {s.name: s for s in specs}
    preset_names = None if preset is None else _known(preset, by_name, "preset")
    requested_names = _known(requested, by_name, "requested")
    denied_names = _known(denied, by_name, "denied", absent_ok=True)
    have = frozenset(capabilities)

    decisions = []
    for spec in sorted(by_name.values(), key=_display_key):
        enabled, reason = _base_decision(spec, preset_names)
        if spec.name in requested_names and not enabled:
            enabled, reason = True, "requested"
        if spec.name in denied_names:
            enabled, reason = False, "denied"
        elif enabled and spec.requires and spec.requires not in have:
            enabled, reason = False, f"needs capability {spec.requires!r}, which the session lacks"
        elif spec.unavailable:
            enabled, reason = False, spec.unavailable
        decisions.append(ToolsetDecision(spec.name, enabled, reason))
    return ToolsetResolution(tuple(decisions))


def _base_decision(spec: ToolsetSpec, preset: frozenset[str] | None) -> tuple[bool, str]:
    if preset is not None:
        return (True, "in the host preset") if spec.name in preset else (False, "not in preset")
    if spec.default:
        return True, "on by default" + (f" (given {spec.requires!r})" if spec.requires else "")
    return False, "off unless requested"


def _known(
    names: Iterable[str], by_name: dict[str, ToolsetSpec], role: str, *, absent_ok: bool = False
) -> frozenset[str]:
    """Check every name is a known toolset.

    With ``absent_ok`` (denials), a name like no known toolset is accepted: denying what is
    not installed is already true. A name close to a known one is still refused as a typo,
    since the toolset it was meant to deny would otherwise stay on.
    """
    chosen = frozenset(names)
    for name in sorted(chosen):
        if name not in by_name and not (absent_ok and not close_names(name, by_name)):
            message = unknown_name_message("toolset", name, by_name)
            raise ConfigError(f"{role} toolsets: {message}")
    return chosen


def _display_key(spec: ToolsetSpec) -> tuple[int, str]:
    if spec.name in _DISPLAY_ORDER:
        return _DISPLAY_ORDER.index(spec.name), ""
    return len(_DISPLAY_ORDER), spec.name
