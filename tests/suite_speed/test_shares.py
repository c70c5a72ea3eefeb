"""The suite's own sharing-out of test modules between xdist workers (``shares.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from tests.suite_speed import shares

ROOT = Path(__file__).resolve().parents[2]


def test_split_gives_the_longest_module_first_to_the_least_loaded_share() -> None:
    seconds = {"a.py": 9.0, "b.py": 5.0, "c.py": 4.0, "d.py": 3.0, "e.py": 2.0}
    split = shares.split(seconds, 2, seconds)
    load = Counter[int]()
    for module, share in split.items():
        load[share] += int(seconds[module])
    assert sorted(load.values()) == [11, 12]  # 9+2 and 5+4+3
    assert split["a.py"] != split["b.py"]


def test_split_counts_an_unlisted_module_as_unknown_seconds_and_uses_every_share() -> None:
    modules = [f"m{i}.py" for i in range(6)]
    split = shares.split(modules, 3, {})
    assert sorted(Counter(split.values()).values()) == [2, 2, 2]
    assert shares.split(modules, 3, {}) == split  # the same on every call, as on every worker


def test_modules_needing_the_same_family_share_a_worker_within_a_fair_share() -> None:
    families = {"a.py": frozenset({"anthropic", "server"}), "b.py": frozenset({"anthropic"})}
    seconds = {"a.py": 2.0, "b.py": 2.0, "x.py": 5.0, "y.py": 5.0}
    split = shares.split(seconds, 2, seconds, families)
    assert split["a.py"] == split["b.py"]
    assert split["x.py"] == split["y.py"] != split["a.py"]  # 9 s (5 of them the import) and 10 s
    # together they would be more than a fair share (half of 13 s): each pays for its own
    seconds = {"a.py": 6.0, "b.py": 6.0, "x.py": 1.0}
    split = shares.split(seconds, 2, seconds, families)
    assert split["a.py"] != split["b.py"]


def test_families_come_from_imports_helpers_conftests_and_fixtures(tmp_path: Path) -> None:
    def write(name: str, text: str) -> None:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))

    write("tests/__init__.py", "")
    write("tests/conftest.py", "from tests.services import postgres_url\n")
    write("tests/services.py", "def postgres_url(): ...\n")
    write("tests/harness.py", "import uvicorn\n")
    write("tests/mcp/conftest.py", "from mcp import ClientSession\n")
    write("tests/mcp/test_a.py", "def test_a(): ...\n")
    write("tests/test_b.py", "from tests.harness import run\n\ndef test_b(postgres_url): ...\n")
    write("tests/test_c.py", 'def test_c():\n    """Names openai and anthropic, imports none."""\n')
    assert shares.families_of(tmp_path, "tests/mcp/test_a.py") == {"mcp"}
    assert shares.families_of(tmp_path, "tests/test_b.py") == {"server", "postgres"}
    assert shares.families_of(tmp_path, "tests/test_c.py") == set()


def test_a_worker_runs_whole_modules_the_longest_first() -> None:
    collection = ["a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "c.py::t2", "d.py::t1"]
    seconds = {"a.py": 1.0, "b.py": 9.0, "c.py": 4.0}  # d.py unknown: UNKNOWN_SECONDS
    order = [collection[i] for i in shares.longest_first(collection, seconds)]
    assert order == ["b.py::t1", "c.py::t1", "c.py::t2", "a.py::t1", "a.py::t2", "d.py::t1"]


def test_a_module_the_controller_did_not_list_has_one_stable_share_in_range() -> None:
    found = {shares.share_of(f"tests/new/test_{i}.py", {}, 4) for i in range(40)}
    assert found <= {0, 1, 2, 3}
    assert len(found) > 1
    assert shares.share_of("tests/new/test_x.py", {}, 4) == shares.share_of(
        "tests/new/test_x.py", {}, 4
    )


def test_listed_modules_follow_python_files_and_the_command_line(tmp_path: Path) -> None:
    for name in ("a/test_one.py", "a/two_test.py", "a/helper.py", "b/test_three.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    patterns = ["test_*.py", "*_test.py"]
    assert shares.listed_modules(tmp_path, ["a"], patterns) == ["a/test_one.py", "a/two_test.py"]
    assert shares.listed_modules(tmp_path, ["b/test_three.py::test_x"], patterns) == [
        "b/test_three.py"
    ]
    assert shares.listed_modules(tmp_path, ["test_three.py"], patterns, tmp_path / "b") == [
        "b/test_three.py"
    ]


def test_stored_seconds_are_the_mean_with_the_old_and_a_deleted_module_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored = tmp_path / "module_seconds.json"
    stored.write_text(json.dumps({"kept.py": 4.0, "gone.py": 1.0, "unrun.py": 2.0}))
    for name in ("kept.py", "new.py", "unrun.py"):
        (tmp_path / name).write_text("")
    monkeypatch.setattr(shares, "MODULE_SECONDS", stored)
    shares.store_seconds(tmp_path, {"kept.py": 2.0, "new.py": 3.0})
    assert json.loads(stored.read_text()) == {"kept.py": 3.0, "new.py": 3.0, "unrun.py": 2.0}


PROJECT_CONFTEST = """
    from pathlib import Path

    from tests.suite_speed import shares

    shares.MODULE_SECONDS = Path(__file__).with_name("module_seconds.json")  # not the suite's


    def pytest_addoption(parser):
        shares.addoption(parser)


    def pytest_configure(config):
        shares.register(config)
"""

RECORDING_TEST = """
    import os
    from pathlib import Path


    def record(name):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(Path(__file__).parents[{up}] / "ran.log", "a") as log:
            log.write(f"{{name}} {{worker}}\\n")


    def test_a():
        record("{module}::test_a")


    def test_b():
        record("{module}::test_b")
"""


def write_project(root: Path) -> list[str]:
    (root / "pytest.ini").write_text(
        "[pytest]\ntestpaths = suite\n"
        # anyio's plugin, which no test here uses, would cost each of the processes ~0.2 s
        "addopts = --dist loadfile -p no:cacheprovider -p no:anyio --import-mode=importlib\n"
    )
    (root / "conftest.py").write_text(textwrap.dedent(PROJECT_CONFTEST))
    modules = [f"suite/a/test_{i}.py" for i in range(7)] + ["suite/b/test_0.py"]
    for module in modules:
        path = root / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(RECORDING_TEST.format(up=2, module=module)))
    # importing this folder's conftest is recorded: only the worker holding its one module does
    (root / "suite/b/conftest.py").write_text(
        "import os\nfrom pathlib import Path\n"
        "with open(Path(__file__).parents[2] / 'conftest.log', 'a') as log:\n"
        "    log.write(os.environ.get('PYTEST_XDIST_WORKER', 'main') + '\\n')\n"
    )
    return modules


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--rootdir", str(root), *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, list[str]]:
    return tmp_path, write_project(tmp_path)


def ran(root: Path) -> list[tuple[str, str]]:
    lines = (root / "ran.log").read_text().splitlines()
    return [(line.split()[0], line.split()[1]) for line in lines]


def test_each_worker_runs_its_share_once_and_a_crashed_workers_rest_runs_on_its_replacement(
    project: tuple[Path, list[str]],
) -> None:
    # one run for both (each run of the inner suite starts three or four processes): the
    # modules split as shares 0 and 1 by name, the crash in share 0 and suite/b in share 1
    root, modules = project
    crashing = root / modules[0]
    crashing.write_text(
        crashing.read_text()
        + "\n\ndef test_crash():\n    os._exit(3)\n\n\ndef test_after_the_crash():\n"
        + f"    record('{modules[0]}::test_after_the_crash')\n"
    )
    result = run_pytest(root, "-n", "2", "--store-module-seconds")
    assert "crashed while running 'suite/a/test_0.py::test_crash'" in result.stdout
    assert "1 failed, 17 passed" in result.stdout, result.stdout + result.stderr
    tests = ran(root)
    # every test ran once, the crashed one aside
    assert sorted(name for name, _ in tests) == sorted(
        [f"{m}::test_{x}" for m in modules for x in "ab"] + [f"{modules[0]}::test_after_the_crash"]
    )
    workers_of = {m: {w for name, w in tests if name.startswith(m)} for m in modules}
    # the rest of the crashed worker's share ran on its replacement, a third worker
    assert workers_of[modules[0]] == {"gw0", "gw2"}
    assert {w for name, w in tests if name.endswith("test_after_the_crash")} == {"gw2"}
    # every other module ran whole on one worker, and each worker imported only its share's
    # conftests: suite/b's by the one worker holding suite/b
    assert all(len(workers_of[m]) == 1 for m in modules[1:])
    assert {w for _, w in tests} == {"gw0", "gw1", "gw2"}
    assert (root / "conftest.log").read_text().split() == list(workers_of["suite/b/test_0.py"])
    # each module's seconds are kept, for the next run's shares
    assert set(json.loads((root / "module_seconds.json").read_text())) == set(modules)


def test_without_n_nothing_is_shared_out(project: tuple[Path, list[str]]) -> None:
    root, _ = project
    result = run_pytest(root, "-n", "0")
    assert "16 passed" in result.stdout, result.stdout + result.stderr


def test_workers_with_nothing_to_run_do_not_make_the_run_one_of_no_tests(
    project: tuple[Path, list[str]],
) -> None:
    # one of the two workers collects nothing; the session's count is the sum of the two
    root, _ = project
    result = run_pytest(root, "-n", "2", "suite/b/test_0.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
