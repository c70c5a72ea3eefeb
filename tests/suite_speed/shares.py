"""With ``-n``: each xdist worker collects, and runs, only its own share of the test modules.

Left to itself, every xdist worker collects the whole suite before it runs a test: it imports
all ~110 modules, rewrites their asserts and imports what they import (the MCP and OpenAI
SDKs, FastAPI, the database clients). That took about 8 s of CPU per worker, a quarter of
the suite's CPU with four workers, and no test ran until every worker was done.

Here the controller splits the modules into one share per worker before the workers start.
It balances the seconds each module took, to collect (import it, rewrite its asserts) and to
run (``module_seconds.json``; a module not listed there counts as ``UNKNOWN_SECONDS``), and
keeps the modules that need the same costly thing (``FAMILIES``: an SDK's import, a
PostgreSQL cluster) on as few workers as keep the shares even. A worker collects its share
only, skipping whole folders where it has nothing, and runs all of it as soon as it has
collected it. A worker that crashes is replaced by one with the same share, which runs what
the first had not.

The price is that the shares are fixed before the run: a worker that ends early does not
help the others. ``--store-module-seconds`` refreshes the file.
"""

from __future__ import annotations

import fnmatch
import functools
import heapq
import json
import re
import time
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

MODULE_SECONDS = Path(__file__).with_name("module_seconds.json")
COLLECTING_KEY = "neta_collecting_seconds"
UNKNOWN_SECONDS = 1.0
FAMILIES = {
    "anthropic": (re.compile(r"anthropic"), 5.0),
    "postgres": (re.compile(r"postgres_(?:url|server)|new_database"), 3.0),
    "openai": (re.compile(r"openai"), 2.0),
    "mcp": (re.compile(r"\bmcp\b|neta_mcp"), 2.0),
    "server": (re.compile(r"neta\.server|uvicorn|server_harness"), 1.0),
}
"""What a worker pays once, for the first of its modules that needs it, in the seconds of
``MODULE_SECONDS``: an SDK's import (anthropic's is about 2 s of CPU, OpenAI's and MCP's
about 0.8 s, FastAPI with uvicorn 0.5 s) or a session-scoped PostgreSQL cluster. Each
pattern is looked for in the names of the modules a test module imports and of the fixtures
it asks for (``families_of``)."""

_PARAMETERS = re.compile(r"\bdef\s+\w+\s*\(([^)]*)\)")
_IMPORTS = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)


def listed_modules(
    rootpath: Path, args: Iterable[str], patterns: Sequence[str], cwd: Path | None = None
) -> list[str]:
    """The test modules the command line (run in ``cwd``) names, relative to ``rootpath``."""
    found: set[str] = set()
    for arg in args:
        path = (cwd or rootpath) / arg.split("::")[0]
        files = path.rglob("*.py") if path.is_dir() else [path]
        for file in files:
            if is_test_module(file, patterns) and file.is_relative_to(rootpath):
                found.add(file.relative_to(rootpath).as_posix())
    return sorted(found)


def is_test_module(path: Path, patterns: Sequence[str]) -> bool:
    return path.is_file() and any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)


@functools.cache
def _source(path: Path) -> str:
    return path.read_text(errors="replace")


def _imports_of(source: Path) -> list[str]:
    return [a or b for a, b in _IMPORTS.findall(_source(source))]


def families_of(rootpath: Path, module: str) -> frozenset[str]:
    """The ``FAMILIES`` a module needs: what it, the ``tests.`` modules it imports and the
    conftests above it import, and the fixtures its tests ask for."""
    path = rootpath / module
    names = _PARAMETERS.findall(_source(path))
    seen: set[Path] = set()
    pending = [folder / "conftest.py" for folder in path.parents if folder.is_relative_to(rootpath)]
    pending.append(path)
    while pending:
        source = pending.pop()
        if source in seen or not source.is_file():
            continue
        seen.add(source)
        for name in _imports_of(source):
            names.append(name)
            if name.startswith("tests."):
                pending.append(rootpath / f"{name.replace('.', '/')}.py")
    text = "\n".join(names)
    return frozenset(name for name, (pattern, _) in FAMILIES.items() if pattern.search(text))


def split(
    modules: Iterable[str],
    count: int,
    seconds: dict[str, float],
    families: dict[str, frozenset[str]] | None = None,
) -> dict[str, int]:
    """Each module's share, ``0 .. count - 1``.

    The modules needing a family (their costliest one) are bundled, as few bundles as keep
    each within a fair share of the whole, so a family is paid for once or a few times rather
    than by every worker. Then the longest bundle or module goes to the least loaded share.
    """
    families = families or {}
    modules = sorted(modules, key=lambda module: (-seconds.get(module, UNKNOWN_SECONDS), module))
    taken = {module: seconds.get(module, UNKNOWN_SECONDS) for module in modules}
    family_of = {
        module: max(needs, key=lambda name: (FAMILIES[name][1], name))
        for module, needs in families.items()
        if needs and module in taken
    }
    setups = sum(FAMILIES[family][1] for family in set(family_of.values()))
    fair = (sum(taken.values()) + setups) / count
    units: list[tuple[float, list[str]]] = []
    bundles: dict[str, list[tuple[float, list[str]]]] = {}
    for module in modules:
        if module not in family_of:
            units.append((taken[module], [module]))
            continue
        family = family_of[module]
        setup = FAMILIES[family][1]
        packs = bundles.setdefault(family, [])
        fits = [i for i, (total, _) in enumerate(packs) if total + taken[module] <= fair]
        if fits:
            total, members = packs[fits[0]]
            packs[fits[0]] = (total + taken[module], [*members, module])
        else:
            packs.append((setup + taken[module], [module]))
    units += [pack for packs in bundles.values() for pack in packs]
    load = [(0.0, share) for share in range(count)]
    shares: dict[str, int] = {}
    for total, members in sorted(units, key=lambda unit: (-unit[0], unit[1])):
        least, share = heapq.heappop(load)
        shares.update(dict.fromkeys(members, share))
        heapq.heappush(load, (least + total, share))
    return shares


def longest_first(collection: Sequence[str], seconds: dict[str, float]) -> list[int]:
    """The indices of ``collection`` (test ids) to run: whole modules, the longest first.

    A worker that ends with its longest module (the two-worker cluster, the browser) keeps the
    run going with little to overlap its waits; ended with short ones, the workers finish
    closer together.
    """
    modules = [module_of(test) for test in collection]
    first: dict[str, int] = {}
    for index, module in enumerate(modules):
        first.setdefault(module, index)

    def order(index: int) -> tuple[float, int, int]:
        module = modules[index]
        return (-seconds.get(module, UNKNOWN_SECONDS), first[module], index)

    return sorted(range(len(collection)), key=order)


def module_of(nodeid: str) -> str:
    """The module a test id belongs to (its path, relative to the root)."""
    return nodeid.split("::")[0]


def share_of(module: str, shares: dict[str, int], count: int) -> int:
    """The share a module belongs to; one the controller did not list goes by a stable hash."""
    if module in shares:
        return shares[module]
    return zlib.crc32(module.encode()) % count


class Controller:
    """The controller's half: decides the shares, gives each worker its own, keeps the times."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.session: pytest.Session | None = None
        self.shares: dict[str, int] | None = None
        self.given: dict[int, int] = {}  # id(spec) -> share; a replacement worker keeps the spec
        self.seconds: dict[str, float] = {}
        self.stored = stored_seconds()

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        if self.shares is None:
            patterns = self.config.getini("python_files")
            root = self.config.rootpath
            cwd = self.config.invocation_params.dir
            modules = listed_modules(root, self.config.args, patterns, cwd)
            families = {module: families_of(root, module) for module in modules}
            count = int(node.workerinput["workercount"])
            self.shares = split(modules, count, self.stored, families)
        share = self.given.setdefault(id(node.gateway.spec), len(self.given))
        node.workerinput["neta_share"] = share
        node.workerinput["neta_shares"] = self.shares

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> ShareScheduling:
        return ShareScheduling(config, self)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = module_of(report.nodeid)
        self.seconds[module] = self.seconds.get(module, 0.0) + report.duration

    def pytest_testnodedown(self, node: Any, error: object) -> None:
        # what the worker took to collect each module (a crashed worker tells nothing)
        collecting = getattr(node, "workeroutput", {}).get(COLLECTING_KEY, {})
        for module, taken in collecting.items():
            self.seconds[module] = self.seconds.get(module, 0.0) + taken

    def pytest_sessionfinish(self) -> None:
        if self.config.getoption("store_module_seconds"):
            store_seconds(self.config.rootpath, self.seconds)

    def count_collected(self, collected: int) -> None:
        # xdist takes the last worker's count for the session's: the progress column would
        # pass 100%, and a last worker with nothing would end the run as "no tests collected"
        if self.session is not None:
            self.session.testscollected = collected


class ShareScheduling:
    """xdist's scheduler protocol: each worker runs all it collected, its share, starting as
    soon as it has collected it rather than when the last worker has."""

    def __init__(self, config: pytest.Config, controller: Controller) -> None:
        from xdist.workermanage import parse_tx_spec_config

        self.controller = controller
        self.numnodes = len(parse_tx_spec_config(config))
        self.first_collected = 0  # how many of the first workers have collected
        self.collections: dict[Any, list[str]] = {}
        self.sizes: dict[int, int] = {}  # id(spec) -> how many tests its latest worker collected
        self.pending: dict[Any, list[int]] = {}
        self.started: set[Any] = set()
        self.left_by: dict[int, list[str]] = {}  # id(spec) -> what a crashed worker did not run

    @property
    def nodes(self) -> list[Any]:
        return list(self.pending)

    @property
    def collection_is_completed(self) -> bool:
        return bool(self.collections)  # so xdist calls schedule() after each worker's collection

    @property
    def tests_finished(self) -> bool:
        # a worker keeps its last test until told there is no more (xdist's protocol): < 2
        everyone = self.first_collected >= self.numnodes and not self.left_by
        return everyone and all(len(pending) < 2 for pending in self.pending.values())

    @property
    def has_pending(self) -> bool:
        return any(self.pending.values())

    def add_node(self, node: Any) -> None:
        self.pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        self.collections[node] = list(collection)
        left = self.left_by.pop(id(node.gateway.spec), None)
        if left is None:
            self.first_collected += 1
            self.pending[node] = longest_first(collection, self.controller.stored)
        else:
            self.pending[node] = [i for i, test in enumerate(collection) if test in left]
        self.sizes[id(node.gateway.spec)] = len(collection)
        self.controller.count_collected(sum(self.sizes.values()))

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.pending[node].remove(item_index)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError

    def remove_node(self, node: Any) -> str | None:
        pending = self.pending.pop(node)
        if not pending:
            return None
        collection = self.collections[node]
        crashed = collection[pending.pop(0)]
        if pending:
            self.left_by[id(node.gateway.spec)] = [collection[i] for i in pending]
        return crashed

    def schedule(self) -> None:
        for node in self.nodes:
            if node in self.collections and node not in self.started:
                self.started.add(node)
                node.send_runtest_some(self.pending[node])
                node.shutdown()  # it ends when these are done


class Worker:
    """A worker's half: collects its own share and skips the rest."""

    def __init__(self, config: pytest.Config, workerinput: dict[str, Any]) -> None:
        self.rootpath = config.rootpath
        self.patterns = config.getini("python_files")
        self.mine = int(workerinput["neta_share"])
        self.count = int(workerinput["workercount"])
        self.shares: dict[str, int] = workerinput["neta_shares"]
        self.listed = {p.as_posix() for module in self.shares for p in Path(module).parents}
        self.holding = {
            parent.as_posix()
            for module, share in self.shares.items()
            if share == self.mine
            for parent in Path(module).parents
        }
        self.collecting: dict[str, float] = {}  # module -> seconds its collection took

    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        if not collection_path.is_relative_to(self.rootpath):
            return None
        relative = collection_path.relative_to(self.rootpath).as_posix()
        if collection_path.is_dir():
            # skipped whole, its conftest not even imported, when it holds none of this
            # worker's modules; a folder the controller did not list is looked into
            return True if relative in self.listed and relative not in self.holding else None
        if not is_test_module(collection_path, self.patterns):
            return None
        return True if share_of(relative, self.shares, self.count) != self.mine else None

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Any:
        if not isinstance(collector, pytest.Module):
            return (yield)
        started = time.perf_counter()
        try:
            return (yield)
        finally:
            self.collecting[module_of(collector.nodeid)] = time.perf_counter() - started

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        session.config.workeroutput[COLLECTING_KEY] = self.collecting  # type: ignore[attr-defined]

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        # pytest asks no ignore hook about a module named on the command line, so every
        # worker has collected it: each keeps its own share of those (not a deselection)
        items[:] = [
            item
            for item in items
            if share_of(module_of(item.nodeid), self.shares, self.count) == self.mine
        ]


def stored_seconds() -> dict[str, float]:
    """What ``MODULE_SECONDS`` holds: each module's seconds (none if there is no file)."""
    return json.loads(MODULE_SECONDS.read_text()) if MODULE_SECONDS.exists() else {}


def store_seconds(rootpath: Path, measured: dict[str, float]) -> None:
    """Write what each module took into ``MODULE_SECONDS``: the mean with what it held, so one
    noisy run moves a share less; a module that no longer exists is dropped."""
    seconds = stored_seconds()
    for module, taken in measured.items():
        seconds[module] = round((seconds.get(module, taken) + taken) / 2, 2)
    kept = {module: taken for module, taken in seconds.items() if (rootpath / module).is_file()}
    MODULE_SECONDS.write_text(json.dumps(dict(sorted(kept.items())), indent=1) + "\n")


def addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-module-seconds",
        action="store_true",
        help="with -n: keep the seconds each test module took, by which the modules are "
        "shared out between the workers (tests/suite_speed/module_seconds.json)",
    )


def register(config: pytest.Config) -> None:
    """Install the half this process needs, if this run shares its modules out (``-n``)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        if "neta_share" in workerinput:
            config.pluginmanager.register(Worker(config, workerinput), "neta-shares-worker")
    elif config.getoption("numprocesses", None) and config.getoption("dist") == "loadfile":
        config.pluginmanager.register(Controller(config), "neta-shares-controller")
