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
