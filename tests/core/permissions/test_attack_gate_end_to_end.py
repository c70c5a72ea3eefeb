"""End to end through Agent + Gate (sandbox off): the bypasses really run commands, and an
answer given for one deferred call is spent on another call that reuses its id."""

import asyncio

import neta
import neta_base.plugin


def base_agent(workspace, turns, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    options.setdefault("sandbox", "off")
    return neta.Agent(
        provider=neta.ScriptedProvider({"turns": turns}),
        plugin_manager=pm,
        preset=["base"],
        workspace=workspace,
        **options,
    )


def bash(command, **extra):
    return {"name": "bash", "arguments": {"command": command}, **extra}


def run(agent, session=None, message="go", **options):
    return asyncio.run(agent.run(message, session=session, **options))


RULES = {"allow": ["bash(git status*)", "bash(echo *)"], "deny": ["bash(rm *)"]}


def test_a_carriage_return_comment_does_not_run_an_unapproved_command(workspace):
    turns = [{"tool_calls": [bash("echo hi\r# ; touch pwned")]}, {"text": "ok"}]
    agent = base_agent(workspace, turns, permissions=RULES)
    run(agent)  # nobody to ask: anything not allowed is denied
    assert not (workspace / "pwned").exists()


def test_a_parameter_expansion_does_not_run_an_unapproved_command(workspace):
    turns = [{"tool_calls": [bash("echo ${x:='$(touch pwned)'} ${x@P}")]}, {"text": "ok"}]
    agent = base_agent(workspace, turns, permissions=RULES)
    run(agent)
    assert not (workspace / "pwned").exists()


def test_an_answer_is_spent_on_its_call_even_when_a_rule_decides_that_call(workspace):
    """An answer given for a deferred call must not wait for a later call reusing its id.

    Between the two requests a deny rule appears (the workspace's file changed): the resumed
    call is denied by it, and the model's next reply reuses the id "c2" for another command.
    """
    turns = [
        {"tool_calls": [bash("ls -la", id="c2")]},
        {"tool_calls": [bash("touch pwned", id="c2")]},
        {"text": "done"},
    ]
    agent = base_agent(workspace, turns, permissions={"allow": ["bash(echo *)"]})
    session = agent.new_session(entry="service", defer_approvals=True)
    first = run(agent, session)
    (pending,) = first.approvals
    assert pending.arguments["command"] == "ls -la"
    (workspace / ".neta").mkdir()
    (workspace / ".neta" / "permissions.toml").write_text('deny = ["bash(ls -la)"]\n')
    agent.permissions = {"allow": ["bash(echo *)"]}
    session.context.permissions = agent.policy()
    second = run(agent, session, message="", approvals={pending.request_id: "allow once"})
    assert not (workspace / "pwned").exists(), "a call nobody approved ran on a stale answer"
    assert second.outcome == "awaiting_input"
    assert [a.arguments["command"] for a in second.approvals] == ["touch pwned"]


def test_planting_a_rules_file_by_redirection_is_not_approved_by_an_echo_rule(workspace):
    plant = "echo 'deny = [\"bash(ls -la)\"]' > .neta/permissions.toml"
    (workspace / ".neta").mkdir()
    agent = base_agent(workspace, [], permissions={"allow": ["bash(echo *)"]})
    decision = agent.policy().decide(
        "bash", toolset="base", effect="runs", arguments={"command": plant}, workspace=workspace
    )
    assert decision.action == "ask", decision.reason
