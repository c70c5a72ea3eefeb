"""Approvals over REST: a call the rules ask about waits for the next request to answer it.

A real uvicorn server, an HTTP client, the real ``patch`` tool on a file in the workspace, and
the default mode (``ask``: every edit asks first).
"""

from tests import http_clients
from tests.core.approval_edit import AFTER, BEFORE, PATCH


def test_an_edit_waits_unmade_until_the_next_request_approves_it(serve, app_py):
    server = serve([PATCH, {"text": "Patched.", "expect": {"last_message_contains": "app.py"}}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        first = http.post(f"/v1/sessions/{sid}/messages", json={"text": "say hello"}).json()
        assert (first["outcome"], first["reason"]) == (
            "awaiting_input",
            "a tool call awaits approval",
        )
        [waiting] = first["approvals"]
        started = next(e for e in first["events"] if e["type"] == "tool_call_start")
        assert waiting["callId"] == started["call_id"]
        assert waiting["requestId"].startswith("approval-")  # names this call of this reply
        assert (waiting["tool"], waiting["effect"]) == ("patch", "writes")
        assert "+    return 'hello'" in waiting["preview"]
        assert waiting["choices"] == ["allow_once", "allow_always", "deny"]
        assert waiting["title"] == "allow patch to edit?"
        assert "Approval needed" in first["reply"]
        assert first["denials"] == []
        assert [e["type"] for e in first["events"]].count("approval_request") == 1
        assert app_py.read_text() == BEFORE  # the run ended; nothing was changed

        answer = {"approvals": {waiting["requestId"]: {"choice": "allow_once"}}}
        second = http.post(f"/v1/sessions/{sid}/messages", json=answer).json()
        assert (second["outcome"], second["reply"]) == ("completed", "Patched."), second
        assert second["approvals"] == second["denials"] == []
        decided = next(e for e in second["events"] if e["type"] == "permission_decision")
        assert (decided["call_id"], decided["action"]) == (waiting["callId"], "allow")
        assert decided["decided_by"] == "user"
        assert app_py.read_text() == AFTER
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[2]["permission"]["action"] == "allow"


def test_a_denial_in_words_with_a_message_tells_the_model_and_lists_the_denial(serve, app_py):
    server = serve(
        [PATCH, {"text": "Fine, no edit.", "expect": {"last_message_contains": "leave it"}}]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        first = http.post(f"/v1/sessions/{sid}/messages", json={"text": "say hello"}).json()
        rid = first["approvals"][0]["requestId"]
        call_id = first["approvals"][0]["callId"]
        answer = {"text": "leave it", "approvals": {rid: "deny: not today"}}
        second = http.post(f"/v1/sessions/{sid}/messages", json=answer).json()
        assert (second["outcome"], second["reply"]) == ("completed", "Fine, no edit."), second
        [denial] = second["denials"]
        assert (denial["callId"], denial["tool"], denial["by"]) == (call_id, "patch", "user")
        assert denial["reason"] == "not today"
        assert denial["arguments"]["path"] == "app.py"
        messages = http.get(f"/v1/sessions/{sid}").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert messages[2]["content"] == "Error: not run: the user denied it: not today"
    assert app_py.read_text() == BEFORE


def test_answers_naming_no_waiting_call_are_refused_and_the_waiting_one_still_waits(serve, app_py):
    server = serve([PATCH, {"text": "Patched."}])
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        url = f"/v1/sessions/{sid}/messages"
        nothing = http.post(url, json={"approvals": {"call_x": "allow once"}})
        assert (nothing.status_code, nothing.json()["code"]) == (404, "unknown_request")
        assert "none waits" in nothing.json()["detail"]
        assert http.post(url, json={"text": ""}).status_code == 422
        assert http.post(url, json={"approvals": {}}).status_code == 422
        bad_choice = http.post(url, json={"approvals": {"call_x": {"choice": "maybe"}}})
        assert bad_choice.status_code == 422

        rid = http.post(url, json={"text": "go"}).json()["approvals"][0]["requestId"]
        wrong = http.post(url, json={"approvals": {"call_x": "allow once"}})
        assert (wrong.status_code, wrong.json()["code"]) == (404, "unknown_request")
        assert rid in wrong.json()["detail"]
        assert app_py.read_text() == BEFORE
        done = http.post(url, json={"approvals": {rid: {"choice": "allow_once"}}}).json()
        assert done["reply"] == "Patched."
        again = http.post(url, json={"approvals": {rid: "allow once"}})
        assert (again.status_code, again.json()["code"]) == (404, "unknown_request")
    assert app_py.read_text() == AFTER
