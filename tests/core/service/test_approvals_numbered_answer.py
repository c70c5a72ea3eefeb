"""REST: an answer given by number is read against all three choices, not the ones offered.

When "allow always" is not offered (``choices == ["allow_once", "deny"]``), choice 2 is
"deny"; the REST path reads the words with every choice (``Agent.run``'s ``_answers``), so
"2" is "allow always" there and the call runs. Over the WebSocket (``clarify_response``) and
at the terminal the same "2" denies.
"""

from tests import http_clients

CMD = "touch pwned$(true)"  # a command substitution: no rule can allow it, so no "allow always"


def test_answering_2_when_only_allow_once_and_deny_are_offered_denies(serve, tmp_path):
    ws = tmp_path / "ws"
    server = serve(
        [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": CMD}}]},
            {"text": "done"},
        ]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        url = f"/v1/sessions/{sid}/messages"
        first = http.post(url, json={"text": "go"}).json()
        [shown] = first["approvals"]
        assert shown["choices"] == ["allow_once", "deny"]  # the second choice is deny
        assert shown["always"] == []
        second = http.post(url, json={"approvals": {shown["requestId"]: "2"}}).json()
    decided = [e for e in second["events"] if e["type"] == "permission_decision"]
    assert not (ws / "pwned").exists(), f"choice 2 (deny) ran the command: {decided}"
    assert [d["action"] for d in decided] == ["deny"]
