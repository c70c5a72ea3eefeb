"""``neta serve --mode/--allow/--ask/--deny-rule``: the rules reach every worker's sessions."""

import pytest

from tests import http_clients
from tests.core.approval_edit import AFTER, BEFORE
from tests.core.cli.cli_runner import run_neta
from tests.services import bearer, start_neta_serve

TURNS = [
    {
        "tool_calls": [
            {
                "name": "patch",
                "arguments": {
                    "path": "app.py",
                    "old_string": "return 'hi'",
                    "new_string": "return 'hello'",
                },
            },
            {"name": "write_file", "arguments": {"path": "secret.txt", "content": "x"}},
            {"name": "write_file", "arguments": {"path": "other.txt", "content": "z"}},
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": "y"}},
        ]
    },
    {"text": "done"},
]


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_rules_allow_deny_and_ask_in_every_worker(tmp_path, request, workers):
    (tmp_path / "app.py").write_text(BEFORE)
    environ = {"NETA_REDIS_URL": request.getfixturevalue("redis_url")} if workers > 1 else {}
    proc, base = start_neta_serve(
        tmp_path,
        TURNS,
        *("--workers", str(workers), "--mode", "auto-edit"),
        *("--allow", "patch(app.py)", "--deny-rule", "write_file(secret.txt)"),
        *("--ask", "write_file(notes.txt)"),
        environ=environ,
    )
    try:
        with http_clients.client(base_url=base, headers=bearer(), timeout=30) as http:
            sid = http.post("/v1/sessions").json()["sessionId"]
            reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "go"}).json()
    finally:
        proc.terminate()
        proc.wait(20)
    decided = {
        e["name"] + "(" + e["call_id"] + ")": (e["action"], e["decided_by"])
        for e in reply["events"]
        if e["type"] == "permission_decision"
    }
    assert decided == {
        "patch(call_1_1)": ("allow", "rule"),
        "write_file(call_1_2)": ("deny", "rule"),
        "write_file(call_1_3)": ("allow", "mode"),
    }
    [denial] = reply["denials"]
    assert (denial["tool"], denial["arguments"]["path"]) == ("write_file", "secret.txt")
    # --ask asks (the next message answers it), though the mode would allow an edit
    assert reply["outcome"] == "awaiting_input"
    assert [a["arguments"]["path"] for a in reply["approvals"]] == ["notes.txt"]
    assert (tmp_path / "app.py").read_text() == AFTER
    assert not (tmp_path / "secret.txt").exists()
    assert (tmp_path / "other.txt").read_text() == "z"
    assert not (tmp_path / "notes.txt").exists()


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--mode", "sometimes"), "unknown mode 'sometimes'"),
        (("--allow", "bash(ls"), "--allow: "),
        (("--deny-rule", ""), "--deny-rule: "),
    ],
)
def test_serve_refuses_to_start_with_a_rule_it_cannot_read(capsys, tmp_path, flags, said):
    done = run_neta(capsys, "serve", "-p", "scripted", "-w", str(tmp_path), *flags)
    assert done.code == 2, done
    assert said in done.stderr
