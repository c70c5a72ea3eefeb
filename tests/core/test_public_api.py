import inspect
from pathlib import Path

import pytest

import neta


def isort_key(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return kind, name


MAX_TOP_LEVEL_NAMES = 60
"""``import neta`` stays small: what plugin authors and host apps need, nothing more."""

REPO = Path(__file__).resolve().parents[2]


def test_public_names_are_sorted():
    assert neta.__all__ == sorted(neta.__all__, key=isort_key)


def test_the_top_level_exports_fewer_than_sixty_names():
    assert len(neta.__all__) < MAX_TOP_LEVEL_NAMES
    assert len(set(neta.__all__)) == len(neta.__all__)


def test_public_names_exist_and_are_documented():
    for name in neta.__all__:
        value = getattr(neta, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_every_public_name_can_be_imported_from_the_package():
    namespace: dict[str, object] = {}
    exec("from neta import *", namespace)  # fails on a listed name the package lacks
    assert {name for name in namespace if name != "__builtins__"} == set(neta.__all__)


def names_taken_from_neta(path):
    """The names a source file takes from ``neta``: ``from neta import X`` and ``neta.X``."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "neta" and node.level == 0:
            names |= {alias.name for alias in node.names}
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "neta"
        ):
            names.add(node.attr)
    return names


def plugin_and_example_sources():
    for folder in ("plugins", "examples"):
        yield from (REPO / folder).rglob("*.py")


def test_every_name_plugins_and_examples_take_from_neta_is_exported():
    import importlib.util

    def is_module(name):
        return importlib.util.find_spec(f"neta.{name}") is not None

    used = {
        name
        for path in plugin_and_example_sources()
        for name in names_taken_from_neta(path)
        if not name.startswith("__")
    }
    assert used, "no plugin source found"
    missing = {name for name in used - set(neta.__all__) if not is_module(name)}
    assert missing == set(), f"plugins use names neta does not export: {sorted(missing)}"


MOVED = {
    "neta.catalog": ["Catalog"],
    "neta.crew": ["ChildStatus"],
    "neta.errors": [
        "AnswerRefused",
        "BadFrame",
        "Busy",
        "HostError",
        "SessionDeleted",
        "SessionOwned",
        "StorageUnavailable",
        "ToolConflictError",
        "UnknownSession",
    ],
    "neta.events": [
        "ApprovalRequested",
        "ClarifyRequest",
        "Outcome",
        "PermissionDecided",
        "ProviderRetry",
        "RunFinished",
        "RunStarted",
        "TextDelta",
        "TodoUpdate",
        "ToolCallStart",
        "ToolOutput",
        "ToolProgress",
        "ToolResultEvent",
    ],
    "neta.fuzzy_match": [
        "AmbiguousMatchError",
        "FuzzyMatch",
        "InvalidEditError",
        "MatchError",
        "NoMatchError",
        "Replacement",
        "fuzzy_find_all",
        "fuzzy_replace",
    ],
    "neta.fuzzy_match.patching": ["PatchOutcome"],
    "neta.fuzzy_match.textfile": ["TextFile", "WrittenText"],
    "neta.plugins": ["NetaPluginManager", "PluginInfo"],
    "neta.providers.client_pool": ["ClientPool"],
    "neta.sandbox": ["SandboxLimits"],
    "neta.session": ["EntryKind", "EventSink", "SessionCapabilities"],
    "neta.session_tools": ["BoundTool", "resolve_session_toolsets"],
    "neta.todos": ["InMemoryTodoStore", "TodoItem", "TodoStatus"],
    "neta.toolsets": [
        "TOOLSET_DEFAULTS",
        "ToolsetDecision",
        "ToolsetResolution",
        "resolve_toolsets",
    ],
}
"""Names ``neta`` once exported, and the public module each now lives in."""


@pytest.mark.parametrize(
    ("module_name", "name"), [(m, n) for m, names in MOVED.items() for n in names]
)
def test_a_name_no_longer_at_the_top_is_reachable_from_its_module(module_name, name):
    import importlib

    module = importlib.import_module(module_name)
    assert name in module.__all__
    assert hasattr(module, name)
    assert name not in neta.__all__
    assert not hasattr(neta, name)


def test_tool_retry_is_gone_tool_error_is_what_a_tool_raises():
    from neta import errors

    assert not hasattr(neta, "ToolRetry")
    assert not hasattr(errors, "ToolRetry")
    assert "ToolRetry" not in (errors.__doc__ or "")


CORE_MODULES = [
    "neta.catalog",
    "neta.crew",
    "neta.memory",
    "neta.todos",
    "neta.paths",
    "neta.errors",
    "neta.events",
    "neta.hookspecs",
    "neta.messages",
    "neta.plugins",
    "neta.session",
    "neta.session_tools",
    "neta.suggest",
    "neta.terminal_text",
    "neta.tools",
    "neta.toolsets",
    "neta.truncation",
    "neta.providers.base",
    "neta.providers.openai_compat",
    "neta.providers.registry",
    "neta.providers.scripted",
    "neta.runtime.agent",
    "neta.runtime.attempt",
    "neta.runtime.prompt_builder",
    "neta.runtime.prompt_guidance",
    "neta.cli.app",
    "neta.cli.context",
    "neta.cli.demo_cmd",
    "neta.cli.plugins_cmd",
    "neta.cli.prompt_cmd",
    "neta.cli.render",
    "neta.cli.run_cmd",
    "neta.cli.tools_cmd",
    "neta.cli.toolsets_cmd",
]


def undocumented_constants(module_name):
    import ast
    import importlib.util

    # the source alone: importing the module would load what it needs (the OpenAI SDK's
    # import alone costs a second of CPU)
    spec = importlib.util.find_spec(module_name)
    assert spec is not None
    assert spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    missing = []
    for statement, following in zip(tree.body, [*tree.body[1:], None], strict=True):
        if isinstance(statement, ast.Assign):
            targets = [t.id for t in statement.targets if isinstance(t, ast.Name)]
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            targets = [statement.target.id]
        else:
            continue
        documented = (
            isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        )
        missing += [
            f"{module_name}.{t}" for t in targets if not t.startswith("_") and not documented
        ]
    return missing


def test_every_public_constant_of_the_core_has_a_docstring():
    missing = [name for module in CORE_MODULES for name in undocumented_constants(module)]
    assert missing == []


def hook_specs():
    from neta import hookspecs

    return [
        value
        for name, value in vars(hookspecs).items()
        if name.startswith("neta_") and inspect.isfunction(value)
    ]


def spec_hints(spec):
    """A hook spec's annotations (its types are imported only for type checkers)."""
    import typing

    import typer

    names = {"typer": typer, **{name: getattr(neta, name) for name in neta.__all__}}
    return typing.get_type_hints(spec, localns=names)


def test_every_hook_spec_documents_its_arguments_and_what_it_returns():
    import typing

    specs = hook_specs()
    assert len(specs) == 8
    for spec in specs:
        doc = inspect.getdoc(spec)
        hints = spec_hints(spec)
        parameters = [p for p in inspect.signature(spec).parameters]
        assert "Args:" in doc if parameters else "Args:" not in doc, spec.__name__
        for parameter in parameters:
            assert f"    {parameter}: " in doc, f"{spec.__name__} does not document {parameter}"
        assert "Returns:" in doc, f"{spec.__name__} does not say what it returns"
        assert typing.Any not in hints.values(), f"{spec.__name__} is typed with Any"


def test_neta_commands_hook_is_given_the_typer_app():
    import typer

    from neta import hookspecs

    assert spec_hints(hookspecs.neta_commands)["app"] is typer.Typer


def test_hookspecs_module_states_the_call_order_and_which_duplicate_is_kept():
    from neta import hookspecs

    doc = hookspecs.__doc__.lower()
    for phrase in ("tryfirst", "trylast", "registered last", "first one kept", "wrapper"):
        assert phrase in doc, phrase


def public_module_names():
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "public_api"]
    return contract["public_modules"]


def defined_public_names(module):
    """The names a module's own source defines at top level, without a leading underscore."""
    import ast

    tree = ast.parse(inspect.getsource(module))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


HOME_MODULES = sorted(set(MOVED) - {"neta.crew", "neta.events", "neta.fuzzy_match"})
"""Public modules beyond the plugins' ones: where host apps and tests find the rest of a topic."""


@pytest.mark.parametrize("module_name", [*public_module_names(), *HOME_MODULES])
def test_every_public_module_exports_a_sorted_complete_documented_all(module_name):
    import importlib

    module = importlib.import_module(module_name)
    exported = module.__all__
    assert exported == sorted(exported, key=isort_key)
    for name in exported:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{module_name}.{name} has no docstring"
    missing = defined_public_names(module) - set(exported) - {"__version__"}
    assert missing == set(), f"{module_name} defines public names it does not export"
    assert undocumented_constants(module_name) == []


INTERNALS = [
    "MAX_TODOS",
    "MAX_TODO_CHARS",
    "apply_todo_changes",
    "TodoChange",
    "CREW_PARENT",
    "ESCALATED_KEY",
    "hookspec",
]


@pytest.mark.parametrize("name", INTERNALS)
def test_internal_names_are_not_part_of_the_top_level_api(name):
    assert name not in neta.__all__
    assert not hasattr(neta, name)


def test_what_a_plugin_author_needs_is_exported_at_the_top():
    from neta import events, paths, terminal_text
    from neta.fuzzy_match import textfile

    needed = {
        "hookimpl",
        "Tool",
        "ToolSchema",
        "ToolsetSpec",
        "ToolResult",
        "SessionContext",
        "Event",
        "Message",
        "Usage",
        "TextSink",
        "resolve_in_workspace",
        "read_text",
        "TodoStore",
        "SubAgentRunner",
        "MemoryStore",
        "ScriptedProvider",
        "build_session_tools",
        "ToolError",
        "sanitize",
    }
    assert needed <= set(neta.__all__)
    assert neta.Event is events.Event
    assert neta.resolve_in_workspace is paths.resolve_in_workspace
    assert neta.read_text is textfile.read_text
    assert neta.sanitize is terminal_text.sanitize


def test_the_top_level_re_exports_each_public_modules_shared_names_unchanged():
    import importlib

    for module_name in [*public_module_names()[1:], *HOME_MODULES]:
        module = importlib.import_module(module_name)
        for name in set(module.__all__) & set(neta.__all__):
            assert getattr(neta, name) is getattr(module, name), f"{module_name}.{name}"


def test_the_package_docstring_names_every_public_module():
    for module_name in [*public_module_names()[1:], *HOME_MODULES]:
        assert f"``{module_name}``" in neta.__doc__, module_name
