"""A crew child's approvals: asked of its parent's user, under its parent's rules.

The child runs through the crew runner, as ``delegate_task`` starts it; the kit's ``sleepy``
declares no effect, so it counts as running something and the default mode asks before it.
"""

import asyncio

import neta
from neta.permissions import ApprovalAnswer
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.plugins.crew.crew_kit import Router, call, turn

SLEEP = call("sleepy", seconds=0, label="child")


class Approver:
    """A parent's approve callback: gives ``answers`` in turn and records the requests."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    async def __call__(self, request):
        self.requests.append(request)
        return self.answers.pop(0)


class Asker:
    """A parent's clarify callback: answers ``answer`` and records the questions."""

    def __init__(self, answer):
        self.answer = answer
        self.asked = []

    async def __call__(self, question, choices):
        self.asked.append((question, choices))
        return self.answer


def kit_agent(tmp_path, child_turns, **options):
    kit.LOG.clear()
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    router = Router([], a=child_turns)
    return Agent(provider=router, plugin_manager=pm, workspace=tmp_path, **options)


def run_child(agent, **capabilities):
    runner = agent.new_session(**capabilities).context.crew_runner
    return asyncio.run(runner.run_child("[a] sleep a moment", toolsets=["kit"]))


def child_reads(text):
    return {"text": "Reported.", "expect": {"last_message_contains": text}}


def test_a_childs_call_is_asked_of_the_parents_approver_naming_the_child_and_runs(tmp_path):
    approver = Approver(ApprovalAnswer("allow_once", by="parent's user"))
    agent = kit_agent(tmp_path, [turn(SLEEP), child_reads("slept 0")])
    result = run_child(agent, approve=approver)
    assert result.status == "completed", result.reason
    [request] = approver.requests
    assert request.agent_id == result.child_id
    assert request.tool == "sleepy"
    assert request.title == f"sub-agent {result.child_id}: allow sleepy to run?"
    assert kit.LOG == ["start child", "end child"]


def test_a_childs_call_the_parents_user_denies_does_not_run_and_the_child_reads_why(tmp_path):
    approver = Approver(ApprovalAnswer("deny", "not during the demo", by="parent's user"))
    reads = child_reads("not run: the user denied it: not during the demo")
    agent = kit_agent(tmp_path, [turn(SLEEP), reads])
    result = run_child(agent, approve=approver)
    assert result.status == "completed", result.reason  # the child read the reason and said so
    assert [r.agent_id for r in approver.requests] == [result.child_id]
    assert kit.LOG == []


def test_a_parent_with_only_clarify_is_asked_the_childs_approval_as_a_question(tmp_path):
    asker = Asker("allow once")
    agent = kit_agent(tmp_path, [turn(SLEEP), child_reads("slept 0")])
    result = run_child(agent, clarify=asker)
    assert result.status == "completed", result.reason
    [(question, choices)] = asker.asked
    assert question.startswith(f"Approval needed: sub-agent {result.child_id}: allow sleepy")
    assert choices[0] == "allow once"
    assert choices[-1] == "deny"
    assert kit.LOG == ["start child", "end child"]


def test_a_child_whose_parent_has_nobody_to_ask_is_denied_and_told_so(tmp_path):
    agent = kit_agent(tmp_path, [turn(SLEEP), child_reads("no one can be asked here")])
    result = run_child(agent)
    assert result.status == "completed", result.reason
    assert kit.LOG == []


def test_a_child_is_held_to_its_parents_deny_rule_without_anyone_being_asked(tmp_path):
    approver = Approver()
    reads = child_reads("not run: denied by sleepy")
    agent = kit_agent(tmp_path, [turn(SLEEP), reads], permissions={"deny": ["sleepy"]})
    result = run_child(agent, approve=approver)
    assert result.status == "completed", result.reason
    assert approver.requests == []
    assert kit.LOG == []


def test_a_child_is_held_to_its_parents_mode(tmp_path):
    approver = Approver()
    agent = kit_agent(tmp_path, [turn(SLEEP), child_reads("slept 0")], permissions="auto")
    result = run_child(agent, approve=approver)
    assert result.status == "completed", result.reason
    assert approver.requests == []  # "auto" runs it without asking, in the child too
    assert kit.LOG == ["start child", "end child"]
