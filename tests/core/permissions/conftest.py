"""Fixtures of the attack tests: a workspace with ``src/``, and a policy with a user's rules."""

import pytest

from neta.permissions import Policy, flag_rules
from tests.core.permissions.attack_kit import USER_RULES


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    return root


@pytest.fixture
def policy():
    """``policy(allow=, ask=, deny=, mode=)``: the user's rules, some lists replaced."""

    def build(*, allow=None, ask=None, deny=None, mode="ask"):
        rules = dict(USER_RULES)
        if allow is not None:
            rules["allow"] = [f"bash({p})" for p in allow]
        if ask is not None:
            rules["ask"] = [f"bash({p})" for p in ask]
        if deny is not None:
            rules["deny"] = [f"bash({p})" for p in deny]
        return Policy.from_sources([flag_rules(mode=mode, **rules)])

    return build


@pytest.fixture
def decide(workspace, policy):
    """``decide(command, allow=, ask=, deny=, mode=)``: what a ``bash`` call gets."""

    def decide(command, *, allow=None, ask=None, deny=None, mode="ask"):
        return policy(allow=allow, ask=ask, deny=deny, mode=mode).decide(
            "bash",
            toolset="base",
            effect="runs",
            arguments={"command": command},
            workspace=workspace,
        )

    return decide


@pytest.fixture
def decide_write(workspace, policy):
    """``decide_write(path, mode=)``: what a ``write_file`` call gets."""

    def decide_write(path, *, mode="ask"):
        return policy(mode=mode).decide(
            "write_file",
            toolset="base",
            effect="writes",
            arguments={"path": path},
            workspace=workspace,
        )

    return decide_write
