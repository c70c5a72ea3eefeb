"""The import graph of a ``neta`` source tree, read from its files, and its circles.

Every ``import`` of a ``neta`` module counts, wherever it stands: at the top, inside a
function, or under ``if TYPE_CHECKING:``. ``from neta.x import name`` imports ``neta.x.name``
when that is a module, else ``neta.x``. The tests keep the core free of circles with it, and
``bench/architecture_map.py`` draws the map of any checkout with it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def module_name(path: Path, core: Path) -> str:
    """The dotted name of the module at ``path`` under the source folder ``core``."""
    parts = path.relative_to(core).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_modules(core: Path) -> dict[str, Path]:
    """Every module of the ``neta`` package under ``core``, by dotted name."""
    return {module_name(path, core): path for path in sorted((core / "neta").rglob("*.py"))}


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The ``neta`` modules that the module ``name`` at ``path`` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph(core: Path) -> dict[str, set[str]]:
    """Each module of ``core``'s ``neta`` package, with the ``neta`` modules it imports."""
    modules = core_modules(core)
    return {name: set(imported_modules(name, path, modules)) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(groups)
