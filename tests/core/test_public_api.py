import inspect

import neta


def isort_key(name: str) -> tuple[int, str]:
    kind = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return kind, name


def test_public_names_are_sorted():
    assert neta.__all__ == sorted(neta.__all__, key=isort_key)


def test_public_names_exist_and_are_documented():
    for name in neta.__all__:
        value = getattr(neta, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_every_public_class_of_the_core_modules_is_exported():
    from neta import catalog, errors, plugins, session_tools, tools, toolsets

    for module in (catalog, errors, plugins, session_tools, tools, toolsets):
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                assert name in neta.__all__, f"{module.__name__}.{name} is not exported"


CORE_MODULES = [
    "neta.catalog",
    "neta.errors",
    "neta.events",
    "neta.hookspecs",
    "neta.messages",
    "neta.plugins",
    "neta.session",
    "neta.session_tools",
    "neta.suggest",
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
    import importlib

    module = importlib.import_module(module_name)
    tree = ast.parse(inspect.getsource(module))
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
    assert len(specs) == 7
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
