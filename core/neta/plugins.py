"""The plugin manager: hook specs, entry-point discovery, allow/deny, and checked hook calls."""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

import pluggy
from pydantic import InstanceOf, TypeAdapter, ValidationError

from neta import hookspecs
from neta.catalog import Catalog, ToolSchema
from neta.errors import PluginError
from neta.host_settings import HostSettings
from neta.suggest import close_names, did_you_mean
from neta.toolsets import ToolsetSpec

__all__ = [
    "BUILTIN_DISTRIBUTION",
    "ENTRY_POINT_GROUP",
    "NetaPluginManager",
    "PluginInfo",
    "call_order",
    "create_plugin_manager",
    "hook_names",
]

ENTRY_POINT_GROUP = "neta"
"""The entry-point group plugins are declared in."""

BUILTIN_DISTRIBUTION = "neta"
"""The distribution the built-in plugins ship in."""

_T = TypeVar("_T")

# What a plugin's code may raise that must not take the host down with it: a module that calls
# sys.exit() at import (an argparse script, say) is a broken plugin, not a request to quit.
_PLUGIN_FAILURES = (Exception, SystemExit)

_SCHEMAS: TypeAdapter[list[ToolSchema]] = TypeAdapter(list[InstanceOf[ToolSchema]])
_TOOLSETS: TypeAdapter[list[ToolsetSpec]] = TypeAdapter(list[ToolsetSpec])
_ANYTHING: TypeAdapter[object] = TypeAdapter(object)  # what notify hooks return is ignored


@dataclass(frozen=True)
class PluginInfo:
    """Where a loaded plugin came from.

    Attributes:
        name: the registered name (the entry-point name for discovered plugins).
        distribution: the installed distribution that declared it, if any.
        version: that distribution's version, if any.
        entry_point: ``group:name = value``, if it came from an entry point.
    """

    name: str
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None

    @property
    def builtin(self) -> bool:
        """Whether the plugin ships with Neta itself."""
        return self.distribution == BUILTIN_DISTRIBUTION


class NetaPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers where plugins came from and what went wrong.

    Attributes:
        problems: every ``PluginError`` met while loading plugins or calling their hooks;
            the plugins involved are skipped, the others keep working.
        host: the host the plugins serve (workspace, host options); every hook that asks for
            a ``host`` argument gets it.
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT_NAME)
        self.add_hookspecs(hookspecs)
        self.problems: list[PluginError] = []
        self._infos: dict[str, PluginInfo] = {}
        self._denied_distributions: set[str] = set()
        self._catalog: Catalog | None = None
        self.rejected_tools: set[tuple[str, str]] = set()  # (plugin, tool) refused by catalog
        self._toolsets: list[ToolsetSpec] | None = None
        self.host = HostSettings(Path.cwd().resolve())

    def configure_host(self, workspace: Path, options: Mapping[str, object] | None = None) -> None:
        """Say which workspace and host options the plugins serve (``Agent`` does this).

        When they change, the catalog and toolsets are rebuilt on next use, since a plugin's
        tools may depend on them.
        """
        options = dict(options or {})
        if not self.host.same_as(workspace, options):
            self._new_host(workspace, options)

    def release_host(self) -> None:
        """Let the plugins let go of what they keep for the host (servers, connections).

        Its ``HostSettings`` is replaced by an equal new one.

        A plugin keeping such things per host ties them to that object (``weakref.finalize``),
        so they are released as it goes; the next use starts them again.
        """
        self._new_host(self.host.workspace, dict(self.host.options))

    def _new_host(self, workspace: Path, options: dict[str, object]) -> None:
        """Serve the plugins new host settings; what was built for the old is built again."""
        self.host = HostSettings(workspace, options)
        self._catalog = self._toolsets = None
        self.rejected_tools = set()

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin`` (see pluggy); the cached catalog is rebuilt on next use.

        Raises:
            PluginError: the plugin implements a hook as a wrapper (``wrapper=True`` or
                ``hookwrapper=True``); it is not registered. Neta calls each plugin's hook
                separately to check what it returns, so there is no call for a wrapper to wrap.
        """
        self._catalog = self._toolsets = None
        registered = super().register(plugin, name)
        if registered is None:  # blocked
            return None
        wrapped = sorted(
            caller.name
            for caller in self.get_hookcallers(plugin) or []
            for impl in caller.get_hookimpls()
            if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper)
        )
        if wrapped:
            self.unregister(plugin)
            hooks = ", ".join(f"{hook}()" for hook in wrapped)
            raise self._problem(
                registered,
                f"{hooks} implemented as a hook wrapper; Neta calls each plugin's hooks "
                "separately and supports no wrappers: implement it as a plain function",
            )
        return registered

    def unregister(self, plugin: object | None = None, name: str | None = None) -> object:
        """Unregister ``plugin`` (see pluggy); the cached catalog is rebuilt on next use."""
        self._catalog = self._toolsets = None
        return super().unregister(plugin, name)

    def catalog(self) -> Catalog:
        """The catalog of every plugin's tool schemas (built once, then cached).

        A schema whose toolset no plugin announced, or whose name is taken, is recorded as a
        problem and left out.
        """
        if self._catalog is None:
            known = {spec.name for spec in self.toolset_specs()}
            catalog = Catalog()
            offered = self.call_each("neta_tools", _SCHEMAS)
            # A schema with a qualified name yields its short name to any that has none.
            ordered = [(p, s) for p, schemas in offered for s in schemas]
            ordered.sort(key=lambda pair: bool(pair[1].qualified_name))
            for plugin, schema in ordered:
                if schema.toolset not in known:
                    self.record_for(
                        plugin, f"tool {schema.name!r} names unknown toolset {schema.toolset!r}"
                    )
                    self.rejected_tools.add((plugin, schema.name))
                    continue
                try:
                    catalog.register_schema(schema, plugin=plugin)
                except PluginError as exc:  # a name conflict, or arguments without a schema
                    self.record(exc)
                    self.rejected_tools.add((plugin, schema.name))
            self._catalog = catalog
        return self._catalog

    def toolset_specs(self) -> list[ToolsetSpec]:
        """Every announced toolset (built once, then cached); a duplicate name is a problem."""
        if self._toolsets is None:
            specs: dict[str, ToolsetSpec] = {}
            owners: dict[str, str] = {}
            for plugin, announced in self.call_each("neta_toolsets", _TOOLSETS):
                for spec in announced:
                    if spec.name in specs:
                        reason = (
                            f"toolset {spec.name!r} is already announced by {owners[spec.name]!r}"
                        )
                        self.record_for(plugin, reason)
                        continue
                    specs[spec.name] = spec
                    owners[spec.name] = plugin
            self._toolsets = list(specs.values())
        return self._toolsets

    def record(self, problem: PluginError) -> None:
        """Remember ``problem`` once (the same failure met twice is reported once)."""
        if all(str(p) != str(problem) for p in self.problems):
            self.problems.append(problem)

    def info(self, name: str) -> PluginInfo:
        """Where plugin ``name`` came from (hosts' own plugins have no distribution)."""
        return self._infos.get(name, PluginInfo(name))

    def plugin_infos(self) -> list[PluginInfo]:
        """Every registered plugin, built-ins first, then by name."""
        names = [n for n, p in self.list_name_plugin() if n is not None and p is not None]
        return sorted((self.info(n) for n in names), key=lambda i: (not i.builtin, i.name))

    def hook_names(self, plugin_name: str) -> list[str]:
        """The hooks plugin ``plugin_name`` implements."""
        plugin = self.get_plugin(plugin_name)
        callers = self.get_hookcallers(plugin) or []
        return sorted(caller.name for caller in callers)

    def call_each(
        self, hook_name: str, adapter: TypeAdapter[_T], **kwargs: object
    ) -> list[tuple[str, _T]]:
        """Call ``hook_name`` on each plugin separately and validate each result.

        Plugins are called in pluggy's order (``call_order``), so results come in the order
        ``pm.hook.<hook_name>()`` would return them. A plugin that raises or returns something
        ``adapter`` rejects is recorded in ``problems`` and left out; the others' results are
        returned with their plugin's name.
        """
        results: list[tuple[str, _T]] = []
        offered = {"host": self.host, **kwargs}
        for impl in call_order(getattr(self.hook, hook_name)):
            name = impl.plugin_name
            try:
                raw = impl.function(**{arg: offered[arg] for arg in impl.argnames})
            except _PLUGIN_FAILURES as exc:
                self.record_for(name, f"{hook_name}() raised {_describe(exc)}", cause=exc)
                continue
            try:
                results.append((name, adapter.validate_python(raw)))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"]) or "result"
                detail = f"{hook_name}() returned malformed data at {where}: {first['msg']}"
                self.record_for(name, detail)
        return results

    def notify(self, hook_name: str, **kwargs: object) -> None:
        """Call a notify hook on every plugin; one that raises is recorded, the rest still run."""
        self.call_each(hook_name, _ANYTHING, **kwargs)

    def record_for(
        self, plugin_name: str, reason: str, *, cause: BaseException | None = None
    ) -> None:
        """Record a ``PluginError`` about plugin ``plugin_name``; ``cause`` is kept as its cause.

        The cause (with its traceback) is what ``neta --debug`` shows for the problem.
        """
        problem = self._problem(plugin_name, reason)
        problem.__cause__ = cause
        self.record(problem)

    def _problem(self, plugin_name: str, reason: str) -> PluginError:
        info = self.info(plugin_name)
        return PluginError(
            plugin_name,
            reason,
            entry_point=info.entry_point,
            distribution=info.distribution,
            version=info.version,
        )

    def deny(self, name: str) -> None:
        """Never load plugin ``name``: an entry-point or plugin name, or a distribution name.

        Distribution names match however they are spelled (``neta-tools-x`` = ``Neta_Tools.X``).
        """
        self.set_blocked(name)
        self._denied_distributions.add(_canonical(name))

    def load_entry_points(self, allow: Iterable[str] | None, *, allow_source: str = "") -> None:
        """Load and register the ``neta`` entry points that are allowed and not blocked.

        Args:
            allow: entry-point or distribution names to load (``None``: all of them).
            allow_source: where ``allow`` came from (an environment variable); when given, a
                name that matches nothing installed is reported, with close names.
        """
        allowed = None if allow is None else frozenset(allow)
        allowed_distributions = frozenset(_canonical(n) for n in allowed or ())
        discovered = _discover()
        for ep, dist_name, version in discovered:
            if self.is_blocked(ep.name) or _canonical(dist_name) in self._denied_distributions:
                continue
            if self.has_plugin(ep.name):
                kept = self._infos.get(ep.name)
                if kept is not None and (kept.distribution or "") != dist_name:
                    self.record_for(
                        ep.name,
                        f"distribution {dist_name!r} declares the same entry-point name; "
                        f"kept the one from {kept.distribution!r}",
                    )
                continue
            if (
                allowed is not None
                and ep.name not in allowed
                and _canonical(dist_name) not in allowed_distributions
            ):
                continue
            info = PluginInfo(
                name=ep.name,
                distribution=dist_name or None,
                version=version,
                entry_point=f"{ep.group}:{ep.name} = {ep.value}",
            )
            self._infos[ep.name] = info
            try:
                self.register(ep.load(), name=ep.name)
            except PluginError as exc:  # refused at registration, with its reason
                self.record(exc)
            except _PLUGIN_FAILURES as exc:
                self.record_for(ep.name, f"failed to load: {_describe(exc)}", cause=exc)
        if allow_source and allowed:
            self._report_unmatched(allowed, discovered, allow_source)

    def _report_unmatched(
        self,
        allowed: frozenset[str],
        discovered: list[_Found],
        source: str,
    ) -> None:
        names = {found.ep.name for found in discovered}
        distributions = {found.distribution for found in discovered} - {""}
        canonical = {_canonical(d) for d in distributions}
        for name in sorted(allowed):
            if name in names or _canonical(name) in canonical:
                continue
            hint = did_you_mean(name, names | distributions)
            self.record_for(
                name,
                f"named in {source}, but no installed plugin or distribution has it"
                + (f"; {hint}" if hint else ""),
            )

    def check_pending_plugins(self) -> None:
        """Find hook implementations without a spec (pluggy's ``check_pending``).

        A plugin implementing an unknown hook (unless marked ``optionalhook=True``) is
        recorded, with the hook it most likely meant, and removed.
        """
        known = hook_names()
        for caller in list(vars(self.hook).values()):
            if not isinstance(caller, pluggy.HookCaller) or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if impl.optionalhook or not self.is_registered(impl.plugin):
                    continue
                closest = close_names(caller.name, known, limit=1)
                hint = f"; did you mean {closest[0]!r}?" if closest else ""
                self.record_for(impl.plugin_name, f"unknown hook {caller.name!r}{hint}")
                self.unregister(impl.plugin)
        self.check_pending()


def call_order(caller: pluggy.HookCaller) -> list[pluggy.HookImpl]:
    """The implementations of a hook in the order pluggy calls them.

    That is ``tryfirst`` ones, then plain ones, then ``trylast`` ones; within each group, the
    plugin registered last comes first. Wrappers are not listed (``register`` refuses them).
    """
    return [i for i in reversed(caller.get_hookimpls()) if not (i.wrapper or i.hookwrapper)]


def hook_names() -> list[str]:
    """The names of every hook Neta specifies."""
    return sorted(name for name in vars(hookspecs) if name.startswith(hookspecs.PROJECT_NAME + "_"))


def create_plugin_manager(
    *,
    load_entrypoints: bool = True,
    allow: Iterable[str] | None = None,
    deny: Iterable[str] = (),
    plugins: Iterable[tuple[str, object]] = (),
) -> NetaPluginManager:
    """Build a plugin manager with Neta's hook specs.

    Args:
        load_entrypoints: discover plugins through entry points in group ``neta``.
        allow: only these entry-point or distribution names (``None``: all). When ``None``,
            ``NETA_LOAD_PLUGINS`` (a comma list; empty means none) is used if set.
        deny: entry-point or distribution names never loaded; ``NETA_DISABLE_PLUGINS`` adds
            to it. Denied names are blocked before any entry point is imported.
        plugins: ``(name, plugin)`` pairs registered directly (hosts and tests).
    """
    pm = NetaPluginManager()
    for name in [*(_env_list("NETA_DISABLE_PLUGINS") or ()), *deny]:
        pm.deny(name)
    for name, plugin in plugins:
        pm.register(plugin, name=name)
    if load_entrypoints:
        if allow is not None:
            pm.load_entry_points(allow)
        else:
            pm.load_entry_points(_env_list("NETA_LOAD_PLUGINS"), allow_source="NETA_LOAD_PLUGINS")
    pm.check_pending_plugins()
    return pm


def _env_list(variable: str) -> list[str] | None:
    raw = os.environ.get(variable)
    if raw is None:
        return None
    return [part.strip() for part in raw.split(",") if part.strip()]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


class _Found(NamedTuple):
    """A ``neta`` entry point and the name and version of the distribution declaring it."""

    ep: importlib.metadata.EntryPoint
    distribution: str  # "" when the metadata is broken and has no name
    version: str | None


_SETTLED_SECONDS = 2.0
"""How long ago a folder must have last changed for what was found in it to be remembered: a
change within its timestamp's resolution (a second or two on some file systems) would not
move it again."""

_PathState = tuple[tuple[str, int, int, int, int], ...]
_remembered: dict[_PathState, tuple[_Found, ...]] = {}  # the last discovery, by its state


def _discover() -> list[_Found]:
    """Every entry point of group ``neta``: Neta's own first, then by name.

    Reading every distribution's metadata is most of what building a plugin manager costs, so
    the last discovery is remembered while no folder on ``sys.path`` changes: installing or
    removing a distribution adds or removes a folder there, which changes the folder's
    modification time. A folder replaced by another is a change too, whatever its times say.
    An entry-point file edited in place, without adding or removing a folder next to it, is
    not noticed by a process that already discovered the plugins.
    """
    now = time.time()
    state = _path_state()
    remembered = _remembered.get(state)
    if remembered is not None:
        return list(remembered)
    found = _read_entry_points()
    newest = max((mtime for _, _, _, mtime, _ in state), default=0) / 1e9
    if now - newest > _SETTLED_SECONDS:
        _remembered.clear()
        _remembered[state] = tuple(found)
    return found


def _path_state() -> _PathState:
    """Each folder on ``sys.path`` with its device, inode, modification and change times.

    The times are in ns; all four are -1 for a folder that is not there.
    """
    state = []
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        try:
            stat = os.stat(folder)
        except OSError:
            state.append((folder, -1, -1, -1, -1))
        else:
            state.append((folder, stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns))
    return tuple(state)


def _read_entry_points() -> list[_Found]:
    """Discover the entry points (see ``_discover``).

    A distribution seen twice on ``sys.path`` counts once; two distributions declaring the
    same entry-point name both appear (the loader reports the second). Each distribution's
    metadata is read once (parsing it is most of what discovery costs).
    """
    found: dict[tuple[str, str, str], _Found] = {}
    for dist in importlib.metadata.distributions():
        eps = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
        if not eps:
            continue
        metadata = dist.metadata
        name = metadata["Name"]
        dist_name = name if isinstance(name, str) else ""
        version = metadata["Version"]
        for ep in eps:
            found.setdefault((ep.name, dist_name, ep.value), _Found(ep, dist_name, version))

    def order(item: _Found) -> tuple[bool, str, str]:
        return (item.distribution != BUILTIN_DISTRIBUTION, item.ep.name, item.distribution)

    return sorted(found.values(), key=order)
