"""Approvals across a delegation: the parent's user answers for the children it starts.

A scripted parent delegates with ``delegate_task`` (or ``delegate_parallel``); the child's
edit or command is asked of the parent session's approve callback, under the child's id, and
the parent's rules hold for the child as for the parent.
"""

import asyncio

from neta.events import PermissionDecided, ToolResultEvent
from neta.permissions import ApprovalAnswer
from tests.plugins.crew.crew_kit import Router, call, crew_agent, turn

BY = "the parent's user"


class Approver:
    """An approve callback that gives ``answers`` in turn and records the requests."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answers.pop(0)


def allow():
    return ApprovalAnswer("allow_once", by=BY)


def deny(reason):
    return ApprovalAnswer("deny", reason, by=BY)


def delegating(goal, kid_turns):
    """A parent that delegates ``goal`` (naming ``[kid]``) with base tools, then says "ok"."""
    parent = [turn(call("delegate_task", goal=goal, toolsets=["base"])), {"text": "ok"}]
    return Router(parent, kid=kid_turns)


def kid_reads(text):
    return {"text": "Reported.", "expect": {"last_message_contains": text}}


def run(agent, approver):
    session = agent.new_session(approve=approver)
    return asyncio.run(agent.run("go", session=session))


def children_of(result, name="delegate_task"):
    [delegated] = [
        e
        for e in result.events
        if isinstance(e, ToolResultEvent) and e.name == name and e.agent_id is None
    ]
    return delegated.data["children"]


def test_a_childs_edit_is_asked_of_the_parents_user_under_the_childs_id_and_made(tmp_path):
    write = call("write_file", path="notes.txt", content="hello\n")
    router = delegating("[kid] write the notes", [turn(write), kid_reads("notes.txt")])
    approver = Approver(allow())
    result = run(crew_agent(tmp_path, router), approver)
    assert result.outcome == "completed", result.reason
    [kid] = children_of(result)
    assert kid["status"] == "completed", kid
    [request] = approver.requests
    assert (request.agent_id, request.tool) == (kid["child_id"], "write_file")
    assert "+hello" in request.preview
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
    decisions = [e for e in result.events if isinstance(e, PermissionDecided)]
    assert [(e.agent_id, e.name, e.action, e.decided_by) for e in decisions] == [
        (None, "delegate_task", "allow", "mode"),
        (kid["child_id"], "write_file", "allow", BY),
    ]


def test_a_childs_command_the_parents_user_denies_does_not_run_and_the_child_reads_why(
    tmp_path,
):
    touch = call("bash", command="touch made.txt")
    reads = kid_reads("not run: the user denied it: not in this repository")
    router = delegating("[kid] make a file", [turn(touch), reads])
    approver = Approver(deny("not in this repository"))
    result = run(crew_agent(tmp_path, router), approver)
    assert result.outcome == "completed", result.reason
    [kid] = children_of(result)
    assert kid["status"] == "completed", kid  # its second turn read the reason
    assert [r.agent_id for r in approver.requests] == [kid["child_id"]]
    assert not (tmp_path / "made.txt").exists()
    assert result.denials == []  # the denial was the child's, reported in its own run


def test_a_child_is_held_to_the_parents_deny_rule_and_nobody_is_asked(tmp_path):
    touch = call("bash", command="touch made.txt")
    router = delegating("[kid] make a file", [turn(touch), kid_reads("denied by bash(touch *)")])
    approver = Approver()
    agent = crew_agent(tmp_path, router, permissions={"deny": ["bash(touch *)"]})
    result = run(agent, approver)
    assert result.outcome == "completed", result.reason
    assert children_of(result)[0]["status"] == "completed"
    assert approver.requests == []
    assert not (tmp_path / "made.txt").exists()


def test_parallel_children_each_ask_the_parents_user_under_their_own_id(tmp_path):
    tasks = [{"goal": f"[{key}] write {key}.txt", "toolsets": ["base"]} for key in "ab"]
    router = Router(
        [turn(call("delegate_parallel", tasks=tasks)), {"text": "ok"}],
        a=[turn(call("write_file", path="a.txt", content="a\n")), kid_reads("a.txt")],
        b=[turn(call("write_file", path="b.txt", content="b\n")), kid_reads("b.txt")],
    )
    approver = Approver(allow(), allow())
    result = run(crew_agent(tmp_path, router), approver)
    assert result.outcome == "completed", result.reason
    children = children_of(result, "delegate_parallel")
    assert [c["status"] for c in children] == ["completed", "completed"]
    asked = {r.agent_id: r.arguments["path"] for r in approver.requests}
    assert asked == {children[0]["child_id"]: "a.txt", children[1]["child_id"]: "b.txt"}
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert (tmp_path / "b.txt").read_text() == "b\n"


def test_parallel_children_ask_the_parents_user_one_question_at_a_time(tmp_path):
    tasks = [{"goal": f"[{key}] write {key}.txt", "toolsets": ["base"]} for key in "ab"]
    router = Router(
        [turn(call("delegate_parallel", tasks=tasks)), {"text": "ok"}],
        a=[turn(call("write_file", path="a.txt", content="a\n")), kid_reads("a.txt")],
        b=[turn(call("write_file", path="b.txt", content="b\n")), kid_reads("b.txt")],
    )
    open_now, most = [], []

    async def approver(request):
        open_now.append(request)
        most.append(len(open_now))
        await asyncio.sleep(0.05)  # a person reading: the other child's question must wait
        open_now.remove(request)
        return allow()

    result = run(crew_agent(tmp_path, router), approver)
    assert result.outcome == "completed", result.reason
    assert most == [1, 1]
