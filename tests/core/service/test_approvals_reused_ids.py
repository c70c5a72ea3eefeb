"""REST: an approval names the tool call by the id the *model* chose.

A model (prompt-injected, or a provider that numbers ids per reply) that reuses a call id
across turns makes an answer meant for one call approve another call the person never saw.
"""

from tests import http_clients

SAFE = "notes.txt"
EVIL = "pwned.txt"


def write(call_id, path, content):
    return {
        "tool_calls": [
            {"id": call_id, "name": "write_file", "arguments": {"path": path, "content": content}}
        ]
    }


def test_a_repeated_approval_post_does_not_approve_a_new_call_reusing_the_id(serve, tmp_path):
    ws = tmp_path / "ws"
    server = serve(
        [
            write("call_0", SAFE, "hello\n"),  # the call the person sees and approves
            write("call_0", EVIL, "evil\n"),  # the next turn reuses the id
            {"text": "done"},
        ]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        url = f"/v1/sessions/{sid}/messages"
        first = http.post(url, json={"text": "write notes"}).json()
        [shown] = first["approvals"]
        assert shown["arguments"]["path"] == SAFE
        answer = {"approvals": {shown["requestId"]: {"choice": "allow_once"}}}
        second = http.post(url, json=answer).json()
        assert (ws / SAFE).read_text() == "hello\n"
        # the new call the person has not seen yet waits under the same request id
        assert second["outcome"] == "awaiting_input"
        # the client's answer is sent again (a retry after a timeout, a double click,
        # at-least-once delivery): it names the call the person saw
        again = http.post(url, json=answer)
    assert not (ws / EVIL).exists(), (
        "an approval given for the write of notes.txt ran a write of pwned.txt "
        f"that nobody saw: {again.status_code} {again.text[:200]}"
    )


def test_an_answer_from_a_stale_view_does_not_approve_a_later_call_reusing_the_id(serve, tmp_path):
    ws = tmp_path / "ws"
    server = serve(
        [
            write("call_0", SAFE, "hello\n"),
            write("call_0", EVIL, "evil\n"),
            {"text": "done"},
        ]
    )
    with http_clients.client(base_url=server.http, timeout=30) as http:
        sid = http.post("/v1/sessions").json()["sessionId"]
        url = f"/v1/sessions/{sid}/messages"
        first = http.post(url, json={"text": "write notes"}).json()
        [shown] = first["approvals"]  # tab A shows this: write notes.txt
        # tab B (or the same person) sends a new message instead of answering
        second = http.post(url, json={"text": "actually, something else"}).json()
        assert second["outcome"] == "awaiting_input"
        # tab A's person approves what tab A showed: the write of notes.txt
        http.post(url, json={"approvals": {shown["requestId"]: "allow once"}})
    assert not (ws / EVIL).exists(), "an approval of notes.txt wrote pwned.txt"
