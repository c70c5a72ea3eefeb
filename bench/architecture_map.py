"""The core's map: its rooms, the arrows between them, its circles and its public names.

A room is a subpackage of ``neta`` (``hosting`` split into its own subpackages and modules,
since that is where its structure lives); a lone module at the top is a room of its own. An
arrow is an import from one room into another; a circle is a group of modules that import
each other, round.

Run ``python bench/architecture_map.py [CHECKOUT]`` (default: this one); compare two commits
by running it on a second checkout made with ``git worktree add``.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lint.import_graph import circles, core_modules, import_graph

HOST_APPS = ("neta.gateway", "neta.service", "neta.console", "neta.cli.mcp_server", "neta.server")


def room(module: str) -> str:
    """The room of a module: ``neta.<x>``, or ``neta.hosting.<x>`` inside hosting."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["hosting"] and len(parts) > 2 else parts[:2])


def public_names(core: Path) -> int:
    """How many names ``neta/__init__.py`` lists in ``__all__``."""
    tree = ast.parse((core / "neta" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            assert isinstance(node.value, ast.List | ast.Tuple)
            return len(node.value.elts)
    return 0


def main(checkout: Path) -> None:
    core = checkout / "core"
    modules = core_modules(core)
    graph = import_graph(core)
    lines = {
        name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules.items()
    }
    rooms: dict[str, list[str]] = {}
    for name in modules:
        rooms.setdefault(room(name), []).append(name)
    arrows = Counter(
        (room(source), room(target))
        for source, targets in graph.items()
        for target in targets
        if room(source) != room(target)
    )
    print(f"checkout: {checkout.name}")
    print(f"modules {len(modules)}, lines {sum(lines.values())}, rooms {len(rooms)}")
    hosting = {name for name in modules if name.startswith("neta.hosting.")}
    flat = [name for name in hosting if name.count(".") == 2]
    print(
        f"hosting: {len(hosting)} modules ({len(flat)} at its top), "
        f"{sum(lines[name] for name in hosting)} lines"
    )
    for name in sorted(r for r in rooms if r.startswith("neta.hosting.")):
        members = rooms[name]
        print(f"  {name:34} {len(members):3} modules {sum(lines[m] for m in members):6} lines")
    print(f"arrows between rooms: {len(arrows)} (imports: {sum(arrows.values())})")
    into_hosting: dict[str, set[str]] = {}
    for source, targets in graph.items():
        if any(source == app or source.startswith(f"{app}.") for app in HOST_APPS):
            for target in targets:
                if target.startswith("neta.hosting"):
                    into_hosting.setdefault(target, set()).add(source)
    print("host apps import from hosting:")
    for target in sorted(into_hosting):
        print(f"  {target:34} <- {', '.join(sorted(into_hosting[target]))}")
    found = circles(graph)
    print(f"circles: {len(found)}")
    for group in found:
        print("  " + " <-> ".join(group))
    print(f"import neta exports: {public_names(core)} names")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
