"""An import-linter contract type: modules import from ``neta`` only what it makes public.

import-linter's own contracts speak of modules; this one also checks names. A source module
(a plugin) may import ``neta`` and the public modules listed in the contract, and from each of
them only the names in its ``__all__`` (or a public submodule). Attribute chains on an imported
module count too: ``neta.MAX_TODOS`` is an internal name even though ``import neta`` is fine.
Imports under ``if TYPE_CHECKING:`` are checked like any other.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from collections.abc import Iterable, Sequence
from pathlib import Path

import grimp
from importlinter import Contract, ContractCheck, fields, output


class PublicApiContract(Contract):
    """Source modules import from the root package only its public modules and names.

    Configuration options:
        source_modules: the packages checked (with every module under them).
        public_modules: the modules that may be imported; the first is the root package.
    """

    type_name = "public_api"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    public_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        """Check every module of every source package."""
        public = [module.name for module in self.public_modules]  # type: ignore[attr-defined]
        found: list[str] = []
        for source in self.source_modules:  # type: ignore[attr-defined]
            modules = {source.name} | graph.find_descendants(source.name)
            for module in sorted(modules):
                found += violations_in(module, public)
        return ContractCheck(kept=not found, metadata={"violations": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        """Print one line per violation."""
        for violation in check.metadata["violations"]:
            output.print_error(violation, bold=False)
            output.new_line()


def violations_in(module: str, public_modules: Sequence[str]) -> list[str]:
    """Every import or attribute of ``module`` that reaches past the public API.

    Args:
        module: a dotted module name, importable.
        public_modules: the modules that may be imported; the first is the root package.

    Returns:
        One ``module:line: ...`` sentence per violation, in source order.
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return [f"{module}: cannot be found"]
    return _Checker(module, public_modules).run(ast.parse(Path(spec.origin).read_text()))


class _Checker:
    def __init__(self, module: str, public_modules: Sequence[str]) -> None:
        self.module = module
        self.root = public_modules[0]
        self.public = set(public_modules)
        self.bound: dict[str, str] = {}  # local name -> the public module it stands for
        self.found: list[tuple[int, str]] = []

    def run(self, tree: ast.Module) -> list[str]:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                self._import_from(node, node.module)
        seen: set[int] = set()
        for node in ast.walk(tree):  # outer attribute chains come before their inner parts
            if isinstance(node, ast.Attribute) and id(node) not in seen:
                self._attribute(node, seen)
        return [f"{self.module}:{line}: {text}" for line, text in sorted(self.found)]

    def _ours(self, module: str) -> bool:
        return module == self.root or module.startswith(self.root + ".")

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not self._ours(alias.name):
                continue
            if alias.name not in self.public:
                self._report(node, f"imports {alias.name}, an internal module")
            elif alias.asname:
                self.bound[alias.asname] = alias.name
            else:
                self.bound[alias.name.split(".")[0]] = self.root

    def _import_from(self, node: ast.ImportFrom, module: str) -> None:
        if not self._ours(module):
            return
        if module not in self.public:
            self._report(node, f"imports {module}, an internal module")
            return
        exported = _exports(module)
        for alias in node.names:
            submodule = f"{module}.{alias.name}"
            if submodule in self.public:
                self.bound[alias.asname or alias.name] = submodule
            elif alias.name not in exported and not _is_dunder(alias.name):
                self._report(node, f"imports {alias.name} from {module}, which does not export it")

    def _attribute(self, node: ast.Attribute, seen: set[int]) -> None:
        chain: list[str] = []
        part: ast.expr = node
        while isinstance(part, ast.Attribute):
            seen.add(id(part))
            chain.append(part.attr)
            part = part.value
        if not isinstance(part, ast.Name) or part.id not in self.bound:
            return
        module = self.bound[part.id]
        for attr in reversed(chain):
            submodule = f"{module}.{attr}"
            if submodule in self.public:
                module = submodule
                continue
            if attr not in _exports(module) and not _is_dunder(attr):
                self._report(node, f"uses {module}.{attr}, which {module} does not export")
            return

    def _report(self, node: ast.stmt | ast.expr, text: str) -> None:
        self.found.append((node.lineno, text))


def _exports(module: str) -> Iterable[str]:
    names = getattr(importlib.import_module(module), "__all__", None)
    if names is None:
        raise ValueError(f"public module {module} has no __all__")
    return frozenset(names)


def _is_dunder(name: str) -> bool:
    """``__version__`` and its kind: module attributes every package may offer, never listed."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")
