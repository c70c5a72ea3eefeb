"""ALLOW ALWAYS broader than the call (low/medium): the rule kept for a path is `TOOL(/path)`,
and a path pattern that matches a folder covers everything inside it. A write_file call naming
an existing folder (which itself fails) or a new file name thus approves, always, every later
write below that name."""

from neta.permissions import Policy, allow_rules_for, flag_rules


def decide(rules, path, workspace):
    policy = Policy.from_sources([flag_rules(allow=list(rules))])
    return policy.decide(
        "write_file",
        toolset="base",
        effect="writes",
        arguments={"path": path, "content": "x"},
        workspace=workspace,
    )


def test_allow_always_is_not_offered_for_a_folder_whose_rule_would_cover_all_inside(workspace):
    (workspace / "lib").mkdir()
    assert allow_rules_for("write_file", {"path": "lib", "content": "x"}, workspace) == ()


def test_allow_always_for_a_file_approves_that_file_and_no_sibling(workspace):
    (workspace / "src" / "a.py").write_text("")
    rules = allow_rules_for("write_file", {"path": "src/a.py", "content": "x"}, workspace)
    assert rules == ("write_file(/src/a.py)",)
    assert decide(rules, "src/a.py", workspace).action == "allow"
    assert decide(rules, "src/b.py", workspace).action != "allow"
    assert decide(rules, "a.py", workspace).action != "allow"
