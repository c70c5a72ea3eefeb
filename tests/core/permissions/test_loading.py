"""Rules files, mappings and flags: where rules come from, and their mistakes named by line."""

import textwrap

import pytest

from neta.errors import ConfigError
from neta.permissions import Policy, flag_rules, load_rules, rules_from_mapping

HOME = "NETA_HOME/permissions.toml"


def write(tmp_path, text):
    path = tmp_path / "permissions.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path, text, *, may_allow=True):
    return load_rules(write(tmp_path, text), HOME, may_allow=may_allow)


def error(tmp_path, text):
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value)


def test_a_rules_file_gives_its_mode_and_rules_deny_first(tmp_path):
    rules = load(
        tmp_path,
        """\
        mode = "auto-edit"
        allow = ["bash(pytest *)", "read_file"]
        ask = ["bash(git push*)"]
        deny = [
            "bash(rm -rf *)",
            "write_file(.env)",
        ]
        """,
    )
    assert rules.mode == "auto-edit"
    assert [(r.action, r.text, r.source) for r in rules.rules] == [
        ("deny", "bash(rm -rf *)", f"{HOME}:5"),
        ("deny", "write_file(.env)", f"{HOME}:6"),
        ("ask", "bash(git push*)", f"{HOME}:3"),
        ("allow", "bash(pytest *)", f"{HOME}:2"),
        ("allow", "read_file", f"{HOME}:2"),
    ]
    assert rules.ignored == ()


def test_a_missing_rules_file_has_no_rules(tmp_path):
    rules = load_rules(tmp_path / "absent.toml", HOME, may_allow=True)
    assert (rules.rules, rules.mode) == ((), None)


def test_an_empty_rules_file_has_no_rules(tmp_path):
    assert load(tmp_path, "# nothing yet\n").rules == ()


class TestInvalidFiles:
    def test_bad_toml_names_the_file_and_the_line(self, tmp_path):
        message = error(tmp_path, 'mode = "ask"\nallow = ["bash" "ls"]\n')
        assert message.startswith(f"{tmp_path / 'permissions.toml'}:2: invalid TOML: ")

    def test_toml_cut_short_names_the_last_line(self, tmp_path):
        message = error(tmp_path, 'mode = "ask"\nallow = [\n  "bash",\n')
        assert message.startswith(f"{tmp_path / 'permissions.toml'}:4: invalid TOML: ")

    def test_an_unknown_key_names_its_line_and_suggests_the_right_one(self, tmp_path):
        message = error(tmp_path, 'mode = "ask"\n\nalow = ["bash"]\n')
        assert message == (
            f"{tmp_path / 'permissions.toml'}:3: unknown key 'alow'; did you mean 'allow'?"
        )

    def test_an_unknown_table_names_its_line(self, tmp_path):
        message = error(tmp_path, 'deny = ["bash"]\n[rules]\nx = 1\n')
        assert message.startswith(f"{tmp_path / 'permissions.toml'}:2: unknown key 'rules'")

    def test_an_unknown_mode_names_its_line_and_suggests_one(self, tmp_path):
        message = error(tmp_path, '# modes\nmode = "auto_edit"\n')
        assert message.startswith(
            f"{tmp_path / 'permissions.toml'}:2: unknown mode 'auto_edit'; did you mean "
        )
        assert "'auto-edit'" in message

    def test_an_entry_that_is_no_rule_names_its_own_line(self, tmp_path):
        message = error(
            tmp_path,
            """\
            deny = [
                "bash(rm -rf *)",
                "bash(git push*",
            ]
            """,
        )
        assert message == (
            f"{tmp_path / 'permissions.toml'}:3: invalid rule 'bash(git push*': "
            "the ')' closing its pattern is missing"
        )

    def test_a_repeated_entry_is_found_at_its_own_line(self, tmp_path):
        message = error(tmp_path, 'allow = [\n  "ls",\n  "ls",\n  "a b",\n]\n')
        assert message.startswith(f"{tmp_path / 'permissions.toml'}:4: invalid rule 'a b'")

    @pytest.mark.parametrize(
        "text", ['allow = "bash"\n', "allow = [1, 2]\n", "[allow]\nbash = true\n"]
    )
    def test_a_list_that_is_no_list_of_rules_names_its_line(self, tmp_path, text):
        message = error(tmp_path, "\n" + text)
        assert message.startswith(f"{tmp_path / 'permissions.toml'}:2: 'allow' must be a list")

    def test_a_file_that_is_not_utf8_is_named(self, tmp_path):
        path = tmp_path / "permissions.toml"
        path.write_bytes(b'allow = ["\xff"]\n')
        with pytest.raises(ConfigError, match="not UTF-8"):
            load_rules(path, HOME, may_allow=True)

    def test_a_folder_in_place_of_the_file_is_named(self, tmp_path):
        folder = tmp_path / "permissions.toml"
        folder.mkdir()
        with pytest.raises(ConfigError, match="cannot read rules"):
            load_rules(folder, HOME, may_allow=True)


class TestUntrustedWorkspace:
    LABEL = "workspace .neta/permissions.toml"

    def test_its_deny_and_ask_rules_are_kept_and_its_allow_rules_ignored(self, tmp_path):
        path = write(tmp_path, 'allow = ["bash"]\nask = ["bash(git *)"]\ndeny = ["write_file"]\n')
        rules = load_rules(path, self.LABEL, may_allow=False)
        assert [(r.action, r.source) for r in rules.rules] == [
            ("deny", f"{self.LABEL}:3"),
            ("ask", f"{self.LABEL}:2"),
        ]
        (ignored,) = rules.ignored
        assert ignored.startswith(f"{self.LABEL}:1: allow 'bash' ignored: the workspace is not")

    @pytest.mark.parametrize("mode", ["auto-edit", "auto"])
    def test_a_mode_wider_than_ask_is_ignored(self, tmp_path, mode):
        rules = load_rules(write(tmp_path, f'mode = "{mode}"\n'), self.LABEL, may_allow=False)
        assert rules.mode is None
        assert rules.ignored[0].startswith(f"{self.LABEL}:1: mode {mode!r} ignored")

    @pytest.mark.parametrize("mode", ["read-only", "ask"])
    def test_a_mode_no_wider_than_ask_is_kept(self, tmp_path, mode):
        rules = load_rules(write(tmp_path, f'mode = "{mode}"\n'), self.LABEL, may_allow=False)
        assert rules.mode == mode

    def test_a_trusted_workspace_may_allow(self, tmp_path):
        path = write(tmp_path, 'mode = "auto"\nallow = ["bash(make *)"]\n')
        rules = load_rules(path, self.LABEL, may_allow=True)
        assert rules.mode == "auto"
        assert [r.action for r in rules.rules] == ["allow"]

    def test_it_narrows_the_default_but_not_the_users_own_rules(self, tmp_path):
        home = rules_from_mapping({"allow": ["bash(make *)"]}, HOME)
        path = write(tmp_path, 'allow = ["bash"]\ndeny = ["bash(make deploy*)", "bash(curl *)"]\n')
        workspace = load_rules(path, self.LABEL, may_allow=False)
        policy = Policy.from_sources([home, workspace])

        def decide(command):
            arguments = {"command": command}
            return policy.decide("bash", effect="runs", arguments=arguments, workspace=tmp_path)

        assert decide("curl x").action == "deny"
        assert decide("make deploy").action == "allow"
        assert decide("ls").action == "ask"
        assert len(policy.ignored) == 1


class TestMappingsAndFlags:
    def test_a_mapping_is_read_like_a_file_with_its_source(self):
        rules = rules_from_mapping(
            {"mode": "auto", "allow": ["read_file"], "deny": ["bash"]}, "Agent(permissions=...)"
        )
        assert rules.mode == "auto"
        assert [(r.action, r.source) for r in rules.rules] == [
            ("deny", "Agent(permissions=...)"),
            ("allow", "Agent(permissions=...)"),
        ]

    def test_a_mapping_mistake_names_its_source(self):
        with pytest.raises(ConfigError, match=r"^host settings: unknown key 'deni'"):
            rules_from_mapping({"deni": []}, "host settings")
        with pytest.raises(ConfigError, match=r"^host settings: invalid rule 'bash\('"):
            rules_from_mapping({"deny": ["bash("]}, "host settings")

    def test_flags_name_themselves_as_sources_deny_first(self):
        rules = flag_rules(mode="auto", allow=["bash(pytest *)"], deny=["bash(rm *)"])
        assert rules.mode == "auto"
        assert [r.source for r in rules.rules] == ["--deny", "--allow"]

    def test_a_bad_flag_is_named(self):
        with pytest.raises(ConfigError, match=r"^--mode: unknown mode 'yolo'; known: "):
            flag_rules(mode="yolo")
        with pytest.raises(ConfigError, match=r"^--deny: invalid rule"):
            flag_rules(deny=["bash(rm"])
