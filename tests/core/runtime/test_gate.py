"""The permission gate: every tool call is allowed, denied, or asked about before it runs."""

import asyncio
import dataclasses
import json

import pytest

import neta
import neta_base.plugin
from neta.permissions import ApprovalAnswer, ApprovalStore


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


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def write(path, content):
    return call("write_file", path=path, content=content)


def tool_messages(result):
    return [m for m in result.messages if m.role == "tool"]


class Asker:
    """An approve callback that answers from a list and remembers every request."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answers.pop(0)


def run(agent, session=None, message="go", **options):
    return asyncio.run(agent.run(message, session=session, **options))


def test_in_mode_ask_with_nobody_to_ask_an_edit_is_denied_and_the_file_is_untouched(tmp_path):
    (tmp_path / "a.txt").write_text("old\n")
    agent = base_agent(tmp_path, [{"tool_calls": [write("a.txt", "new\n")]}, {"text": "ok"}])
    result = run(agent)
    assert (tmp_path / "a.txt").read_text() == "old\n"
    (message,) = tool_messages(result)
    assert message.is_error
    assert "no one can be asked here to approve it" in message.content
    assert "mode 'ask' asks before a tool that writes" in message.content
    assert message.permission["action"] == "deny"
    assert message.permission["decided_by"] == "no one to ask"
    assert [(d.tool, d.by, d.arguments["path"]) for d in result.denials] == [
        ("write_file", "no one to ask", "a.txt")
    ]


def test_in_mode_ask_a_read_runs_without_asking_and_its_decision_is_recorded(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    asker = Asker()
    agent = base_agent(
        tmp_path, [{"tool_calls": [call("read_file", path="a.txt")]}, {"text": "ok"}]
    )
    result = run(agent, agent.new_session(approve=asker))
    assert asker.requests == []
    (message,) = tool_messages(result)
    assert "hello" in message.content
    assert message.permission["action"] == "allow"
    assert message.permission["decided_by"] == "mode"
    decisions = [e for e in result.events if e.type == "permission_decision"]
    assert [(d.name, d.action, d.decided_by) for d in decisions] == [("read_file", "allow", "mode")]
    assert decisions[0].at > 0


def test_an_approved_edit_runs_after_the_person_saw_its_diff(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    asker = Asker(ApprovalAnswer("allow_once"))
    turns = [
        {"tool_calls": [call("patch", path="a.txt", old_string="two", new_string="TWO")]},
        {"text": "ok"},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(approve=asker))
    (request,) = asker.requests
    assert request.tool == "patch"
    assert request.effect == "writes"
    assert "-two" in request.preview
    assert "+TWO" in request.preview
    assert request.always == ("patch(/a.txt)",)
    assert (tmp_path / "a.txt").read_text() == "one\nTWO\n"
    assert tool_messages(result)[0].permission["decided_by"] == "user"


def test_a_write_files_preview_is_the_diff_from_the_file_as_it_is(tmp_path):
    (tmp_path / "a.txt").write_text("keep\nold\n")
    asker = Asker(ApprovalAnswer("deny"))
    agent = base_agent(tmp_path, [{"tool_calls": [write("a.txt", "keep\nnew\n")]}, {"text": "ok"}])
    run(agent, agent.new_session(approve=asker))
    preview = asker.requests[0].preview
    assert "-old" in preview
    assert "+new" in preview
    assert " keep" in preview


def test_a_denial_with_a_reason_is_what_the_model_reads_and_nothing_runs(tmp_path):
    asker = Asker(ApprovalAnswer("deny", "use the staging database"))
    turns = [
        {"tool_calls": [call("bash", command="touch ran")]},
        {"text": "ok", "expect": {"last_message_contains": "use the staging database"}},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(approve=asker))
    assert result.outcome == "completed", result.reason
    assert not (tmp_path / "ran").exists()
    assert asker.requests[0].preview.startswith("$ touch ran")
    assert result.denials[0].reason == "use the staging database"
    assert result.denials[0].by == "user"


def test_allow_always_keeps_the_rule_for_the_workspace_and_the_same_call_runs_unasked(tmp_path):
    asker = Asker(ApprovalAnswer("allow_always"))
    turns = [
        {"tool_calls": [call("bash", command="mkdir -p out/one")]},
        {"tool_calls": [call("bash", command="mkdir -p out/one")]},
        {"text": "ok"},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(approve=asker))
    assert len(asker.requests) == 1
    assert (tmp_path / "out" / "one").is_dir()
    assert ApprovalStore().entries(tmp_path) == ["bash(mkdir -p out/one)"]
    second = tool_messages(result)[1].permission
    assert second["decided_by"] == "rule"
    assert second["rule"] == "bash(mkdir -p out/one) from NETA_HOME/approvals.json"
    # a new agent for the workspace reads the kept rule too
    (tmp_path / "out" / "one").rmdir()
    again = base_agent(
        tmp_path, [{"tool_calls": [call("bash", command="mkdir -p out/one")]}, {"text": "ok"}]
    )
    run(again)
    assert (tmp_path / "out" / "one").is_dir()


def test_a_kept_command_that_writes_a_file_through_a_redirection_asks_again_in_mode_ask(
    tmp_path,
):
    # the redirection is an edit, judged on each call: mode ask asks before edits
    asker = Asker(ApprovalAnswer("allow_always"), ApprovalAnswer("deny"))
    turns = [
        {"tool_calls": [call("bash", command="echo one >> log")]},
        {"tool_calls": [call("bash", command="echo one >> log")]},
        {"text": "ok"},
    ]
    agent = base_agent(tmp_path, turns)
    run(agent, agent.new_session(approve=asker))
    assert ApprovalStore().entries(tmp_path) == ["bash(echo one)"]
    assert len(asker.requests) == 2
    assert "an edit, which this mode asks before" in asker.requests[1].reason
    assert (tmp_path / "log").read_text() == "one\n"


def test_an_allow_rule_for_the_first_command_does_not_allow_a_compound_line(tmp_path):
    asker = Asker(ApprovalAnswer("deny"))
    turns = [{"tool_calls": [call("bash", command="echo ok && touch ran")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns, permissions={"allow": ["bash(echo *)"]})
    run(agent, agent.new_session(approve=asker))
    (request,) = asker.requests
    assert request.arguments["command"] == "echo ok && touch ran"
    assert not (tmp_path / "ran").exists()


def test_a_session_with_only_clarify_is_asked_a_question_with_choices(tmp_path):
    asked = []

    async def clarify(question, choices):
        asked.append((question, choices))
        return "deny: not now"

    turns = [{"tool_calls": [write("b.txt", "x")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(clarify=clarify))
    ((question, choices),) = asked
    assert question.startswith("Approval needed: allow write_file to edit?")
    assert "+x" in question
    assert choices == ["allow once", "allow always", "deny"]
    assert not (tmp_path / "b.txt").exists()
    assert result.denials[0].reason == "not now"


def test_an_unclear_text_answer_denies_and_the_model_reads_it(tmp_path):
    async def clarify(question, choices):
        return "hmm, what does it do?"

    turns = [
        {"tool_calls": [write("b.txt", "x")]},
        {"text": "ok", "expect": {"last_message_contains": "hmm, what does it do?"}},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(clarify=clarify))
    assert result.outcome == "completed", result.reason
    assert not (tmp_path / "b.txt").exists()


def test_a_deny_rule_holds_in_mode_auto_and_nobody_is_asked(tmp_path):
    asker = Asker()
    turns = [{"tool_calls": [write(".env", "SECRET=1")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns, permissions={"mode": "auto", "deny": ["write_file(.env)"]})
    result = run(agent, agent.new_session(approve=asker))
    assert asker.requests == []
    assert not (tmp_path / ".env").exists()
    message = tool_messages(result)[0]
    assert "denied by write_file(.env)" in message.content
    assert message.permission["rule"] == "write_file(.env) from Agent(permissions=...)"


def test_mode_read_only_denies_a_command_an_allow_rule_names(tmp_path):
    turns = [{"tool_calls": [call("bash", command="touch ran")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns, permissions={"mode": "read-only", "allow": ["bash"]})
    result = run(agent, agent.new_session(approve=Asker()))
    assert not (tmp_path / "ran").exists()
    assert "mode 'read-only' denies a tool that runs" in tool_messages(result)[0].content


def test_mode_auto_edit_lets_edits_run_and_asks_before_commands(tmp_path):
    asker = Asker(ApprovalAnswer("deny"))
    turns = [
        {"tool_calls": [write("a.txt", "x"), call("bash", command="touch ran")]},
        {"text": "ok"},
    ]
    agent = base_agent(tmp_path, turns, permissions="auto-edit")
    run(agent, agent.new_session(approve=asker))
    assert (tmp_path / "a.txt").read_text() == "x"
    assert [r.tool for r in asker.requests] == ["bash"]
    assert not (tmp_path / "ran").exists()


def test_an_untrusted_workspace_file_may_deny_but_its_allow_rules_are_ignored(tmp_path):
    (tmp_path / ".neta").mkdir()
    (tmp_path / ".neta" / "permissions.toml").write_text(
        'mode = "auto"\nallow = ["bash"]\ndeny = ["write_file(notes/*)"]\n'
    )
    asker = Asker(ApprovalAnswer("deny"))
    turns = [
        {"tool_calls": [call("bash", command="touch ran"), write("notes/a.md", "x")]},
        {"text": "ok"},
    ]
    agent = base_agent(tmp_path, turns, trust_workspace=False)
    result = run(agent, agent.new_session(approve=asker))
    assert [r.tool for r in asker.requests] == ["bash"]  # asked, not allowed by the repository
    assert not (tmp_path / "ran").exists()
    assert not (tmp_path / "notes").exists()
    assert "denied by write_file(notes/*)" in tool_messages(result)[1].content
    assert any("not trusted" in line for line in agent.policy().ignored)


def test_a_trusted_workspace_files_allow_rules_apply(tmp_path):
    (tmp_path / ".neta").mkdir()
    (tmp_path / ".neta" / "permissions.toml").write_text('allow = ["bash(touch *)"]\n')
    turns = [{"tool_calls": [call("bash", command="touch ran")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns, trust_workspace=True)
    run(agent)
    assert (tmp_path / "ran").exists()


def test_an_invalid_rules_file_is_refused_naming_the_line_before_any_session(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "permissions.toml").write_text('mode = "ask"\nallow = ["bash(pytest *"]\n')
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("NETA_HOME", str(home))
        with pytest.raises(neta.ConfigError, match=r"permissions.toml.*line 2|:2"):
            base_agent(tmp_path, []).new_session()


def test_an_unknown_mode_given_to_the_agent_is_refused_at_once(tmp_path):
    with pytest.raises(neta.ConfigError, match="unknown mode 'yolo'"):
        base_agent(tmp_path, [], permissions="yolo")


def test_an_unanswered_approval_times_out_as_a_denial(tmp_path):
    async def never(request):
        await asyncio.sleep(60)

    turns = [
        {"tool_calls": [call("bash", command="touch ran")]},
        {"text": "ok", "expect": {"last_message_contains": "did not answer"}},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(approve=never, clarify_timeout=0.2))
    assert result.outcome == "completed", result.reason
    assert not (tmp_path / "ran").exists()
    assert result.denials[0].by == "timeout"


def test_two_calls_of_one_reply_are_asked_one_at_a_time(tmp_path):
    open_questions = []
    most = []

    async def approve(request):
        open_questions.append(request)
        most.append(len(open_questions))
        await asyncio.sleep(0.05)
        open_questions.remove(request)
        return ApprovalAnswer("allow_once")

    turns = [{"tool_calls": [write("a.txt", "a"), write("b.txt", "b")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns)
    run(agent, agent.new_session(approve=approve))
    assert most == [1, 1]
    assert (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").exists()


def test_a_deferred_approval_ends_the_run_and_the_next_message_answers_it(tmp_path):
    turns = [
        {"tool_calls": [write("a.txt", "new"), call("read_file", path="a.txt")]},
        {"text": "written", "expect": {"last_message_contains": "Created a.txt"}},
    ]
    agent = base_agent(tmp_path, turns)
    session = agent.new_session(entry="service", defer_approvals=True)
    first = run(agent, session)
    assert first.outcome == "awaiting_input"
    assert first.reason == "a tool call awaits approval"
    assert not (tmp_path / "a.txt").exists()
    (pending,) = first.approvals
    assert pending.tool == "write_file"
    assert "Approval needed: allow write_file to edit?" in first.text
    assert any(e.type == "approval_request" for e in first.events)
    # the pending call has no result yet; the read beside it ran
    assert [m.name for m in tool_messages(first)] == ["read_file"]
    second = run(agent, session, message="", approvals={pending.request_id: "allow once"})
    assert second.outcome == "completed", second.reason
    assert (tmp_path / "a.txt").read_text() == "new"
    assert [m.role for m in second.messages].count("user") == 1


def test_a_deferred_approval_denied_in_the_next_message_tells_the_model_why(tmp_path):
    turns = [
        {"tool_calls": [call("bash", command="touch ran")]},
        {"text": "ok", "expect": {"last_message_contains": "try again later"}},
    ]
    agent = base_agent(tmp_path, turns)
    session = agent.new_session(entry="service", defer_approvals=True)
    first = run(agent, session)
    answer = {first.approvals[0].request_id: ApprovalAnswer("deny", "not on main")}
    second = run(agent, session, message="try again later", approvals=answer)
    assert second.outcome == "completed", second.reason
    assert not (tmp_path / "ran").exists()
    said = [(m.role, m.content) for m in second.messages if m.role in {"tool", "user"}]
    assert said[-2] == ("tool", "Error: not run: the user denied it: not on main")
    assert said[-1] == ("user", "try again later")  # after the call's result


def test_answering_a_call_that_does_not_wait_is_refused(tmp_path):
    agent = base_agent(tmp_path, [{"text": "hi"}])
    session = agent.new_session(entry="service", defer_approvals=True)
    run(agent, session)
    with pytest.raises(neta.ConfigError, match="no tool call waits for approval under id 'nope'"):
        run(agent, session, approvals={"nope": "allow once"})


def test_every_built_in_tool_declares_what_it_does():
    pm = neta.create_plugin_manager()
    catalog = pm.catalog()
    names = catalog.tool_names([spec.name for spec in pm.toolset_specs()])
    assert "bash" in names
    undeclared = [name for name in names if catalog.get(name).effect is None]
    assert undeclared == []
    assert catalog.get("bash").effect == "runs"
    assert catalog.get("read_file").effect == "reads"
    assert {catalog.get(n).effect for n in ("write_file", "patch")} == {"writes"}


def test_a_tool_that_declares_nothing_counts_as_running_something(tmp_path, make_pm):
    import pydantic

    class NoArgs(pydantic.BaseModel):
        pass

    class Plugin:
        @neta.hookimpl
        def neta_tools(self):
            return [neta.ToolSchema(name="mystery", toolset="x", description="d", args=NoArgs)]

        @neta.hookimpl
        def neta_toolsets(self):
            return [neta.ToolsetSpec(name="x", description="x")]

        @neta.hookimpl
        def neta_build_tools(self, session):
            return [neta.Tool(name="mystery", execute=lambda args: "ran")]

    pm = make_pm(x=Plugin())
    agent = neta.Agent(
        provider=neta.ScriptedProvider(
            {"turns": [{"tool_calls": [call("mystery")]}, {"text": "ok"}]}
        ),
        plugin_manager=pm,
        preset=["x"],
        workspace=tmp_path,
        permissions="auto-edit",
    )
    result = run(agent)
    assert "no one can be asked" in tool_messages(result)[0].content
    assert json.loads(json.dumps(result.denials[0].arguments)) == {}


@pytest.mark.parametrize("path", [".git/config", ".neta/permissions.toml", ".git/hooks/pre-commit"])
def test_in_mode_auto_edit_an_edit_to_a_folder_whose_files_run_commands_asks(tmp_path, path):
    asker = Asker(ApprovalAnswer("deny"))
    agent = base_agent(tmp_path, [{"tool_calls": [write(path, "x")]}, {"text": "ok"}])
    agent.permissions = "auto-edit"
    run(agent, agent.new_session(approve=asker))
    (request,) = asker.requests
    assert "whose files run commands" in request.reason
    assert not (tmp_path / path).exists()


def test_in_mode_auto_an_edit_to_git_runs(tmp_path):
    agent = base_agent(tmp_path, [{"tool_calls": [write(".git/info", "x")]}, {"text": "ok"}])
    agent.permissions = "auto"
    run(agent)
    assert (tmp_path / ".git" / "info").read_text() == "x"


def test_a_channel_that_fails_while_asking_denies_the_call_and_the_run_goes_on(tmp_path):
    async def broken(request):
        raise ConnectionError("the client went away")

    turns = [
        {"tool_calls": [call("bash", command="touch ran")]},
        {"text": "ok", "expect": {"last_message_contains": "the client went away"}},
    ]
    agent = base_agent(tmp_path, turns)
    result = run(agent, agent.new_session(approve=broken))
    assert result.outcome == "completed", result.reason
    assert not (tmp_path / "ran").exists()


def test_a_call_the_answers_leave_out_waits_again_and_the_model_is_not_asked(tmp_path):
    turns = [{"tool_calls": [write("a.txt", "a"), write("b.txt", "b")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns)
    session = agent.new_session(entry="service", defer_approvals=True)
    first = run(agent, session)
    a, b = first.approvals
    with pytest.raises(neta.ConfigError, match="answer every call that waits"):
        run(agent, session, message="and then?", approvals={a.request_id: "allow once"})
    second = run(agent, session, message="", approvals={a.request_id: "allow once"})
    assert second.outcome == "awaiting_input"
    assert (tmp_path / "a.txt").exists()
    assert not (tmp_path / "b.txt").exists()
    assert [w.request_id for w in second.approvals] == [b.request_id]  # the same request
    assert second.turns == 0
    third = run(agent, session, message="", approvals={b.request_id: "2"})  # 2: allow always
    assert third.outcome == "completed", third.reason
    assert (tmp_path / "b.txt").exists()


def test_a_numbered_text_answer_is_read_against_the_choices_the_call_offered(tmp_path):
    # a line no rule can allow exactly offers no "allow always": 2 is deny
    turns = [{"tool_calls": [call("bash", command="touch ran$(true)")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns)
    session = agent.new_session(entry="service", defer_approvals=True)
    (waiting,) = run(agent, session).approvals
    assert waiting.choices == ("allow_once", "deny")
    run(agent, session, message="", approvals={waiting.request_id: "2"})
    assert not (tmp_path / "ran").exists()


def test_calls_left_waiting_are_listed_in_the_order_of_the_calls(tmp_path, monkeypatch):
    import time

    import neta_base.write_file as write_file_module

    built = write_file_module.build

    def slow_first_preview(session):
        tool = built(session)
        preview = tool.preview

        def slowly(args):
            if args.path == "a.txt":
                time.sleep(0.2)  # the first call's check ends after the second's
            return preview(args)

        return dataclasses.replace(tool, preview=slowly)

    monkeypatch.setattr(write_file_module, "build", slow_first_preview)
    turns = [{"tool_calls": [write("a.txt", "a"), write("b.txt", "b")]}, {"text": "ok"}]
    agent = base_agent(tmp_path, turns)
    first = run(agent, agent.new_session(entry="service", defer_approvals=True))
    assert [w.arguments["path"] for w in first.approvals] == ["a.txt", "b.txt"]
