"""How a command line is read: split into simple commands, quotes off, expansions seen."""

import random

import pytest

from neta.permissions import Redirect, parse_command


def words(text):
    return [command.words for command in parse_command(text).commands]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("git status && rm -rf ~", [("git", "status"), ("rm", "-rf", "~")]),
        ("make || echo failed", [("make",), ("echo", "failed")]),
        ("cd src; pytest", [("cd", "src"), ("pytest",)]),
        ("cat log | grep error | wc -l", [("cat", "log"), ("grep", "error"), ("wc", "-l")]),
        ("sleep 5 & rm x", [("sleep", "5"), ("rm", "x")]),
        ("make |& tee out", [("make",), ("tee", "out")]),
        ("ls\nrm -rf build", [("ls",), ("rm", "-rf", "build")]),
        ("(cd src && make)", [("cd", "src"), ("make",)]),
        ("git status&&rm x", [("git", "status"), ("rm", "x")]),
    ],
)
def test_a_line_splits_on_every_operator_that_starts_another_command(line, expected):
    assert words(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('echo "a && b"', [("echo", "a && b")]),
        ("echo 'a; rm -rf ~'", [("echo", "a; rm -rf ~")]),
        (r"echo a\;b", [("echo", "a;b")]),
        ("g\"it\" st'atus'", [("git", "status")]),
        ('echo "say \\"hi\\""', [("echo", 'say "hi"')]),
        ("ec\\\nho hi", [("echo", "hi")]),
        ("echo a#b # a comment; rm -rf ~", [("echo", "a#b")]),
    ],
)
def test_quotes_and_escapes_keep_operators_inside_one_word(line, expected):
    assert words(line) == expected


def test_leading_keywords_of_compound_commands_are_taken_off():
    line = "if true; then rm -rf x; fi; for f in *; do shred $f; done; ! grep y; { ls; }"
    assert words(line) == [
        ("true",),
        ("rm", "-rf", "x"),
        ("for", "f", "in", "*"),
        ("shred", "$f"),
        ("grep", "y"),
        ("ls",),
    ]


def test_a_quoted_keyword_is_a_command_name():
    assert words("'then' x") == [("then", "x")]


@pytest.mark.parametrize(
    ("line", "nested", "reason"),
    [
        ("echo $(rm -rf ~)", ("rm", "-rf", "~"), "a command substitution $(...)"),
        ('echo "$(rm -rf ~)"', ("rm", "-rf", "~"), "a command substitution $(...)"),
        ("echo `rm -rf ~`", ("rm", "-rf", "~"), "a command substitution in backticks"),
        ("diff <(rm -rf ~) b", ("rm", "-rf", "~"), "a process substitution <(...)"),
        ("tee >(rm -rf ~)", ("rm", "-rf", "~"), "a process substitution <(...)"),
        ("echo ${X:-$(rm -rf ~)}", ("rm", "-rf", "~"), "a command substitution $(...)"),
        ("echo $(echo $(rm -rf ~))", ("rm", "-rf", "~"), "a command substitution $(...)"),
    ],
)
def test_commands_inside_substitutions_are_read_and_named_opaque(line, nested, reason):
    parsed = parse_command(line)
    assert nested in [command.words for command in parsed.nested]
    assert reason in parsed.opaque


def test_a_substitution_stays_one_word_of_its_command_as_written():
    assert words("git log $(cat range) --oneline") == [("git", "log", "$(cat range)", "--oneline")]


def test_single_quotes_keep_a_substitution_as_text_but_it_is_read_as_code_that_may_run():
    # PS4='$(...)', trap '...', printf -v 'a[$(...)]' and ${x@P} run such text later
    parsed = parse_command("echo '$(rm -rf ~)' '`id`'")
    assert [c.words for c in parsed.commands] == [("echo", "$(rm -rf ~)", "`id`")]
    assert parsed.opaque[0] == "quoted text holding a substitution another command may run"
    assert [c.words for c in parsed.nested] == [("rm", "-rf", "~"), ("id",)]


def test_an_escaped_dollar_is_no_substitution():
    assert parse_command(r"echo \$(id)").nested == ()


def test_a_substitution_holding_a_closing_parenthesis_in_quotes_ends_at_its_own():
    parsed = parse_command("echo $(echo ')'; rm x) done")
    assert [c.words for c in parsed.nested] == [("echo", ")"), ("rm", "x")]
    assert words("echo $(echo ')'; rm x) done") == [("echo", "$(echo ')'; rm x)", "done")]


@pytest.mark.parametrize(
    "line", ["echo 'open", 'echo "open', "echo $(ls", "echo `ls", "echo ${X", "echo $'x"]
)
def test_an_unbalanced_line_is_read_to_its_end_and_named_opaque(line):
    parsed = parse_command(line)
    assert parsed.commands[0].words[0] == "echo"
    assert parsed.opaque


def test_redirections_are_not_words():
    (command,) = parse_command("make 2>&1 >build.log <input &>>all 2> err").commands
    assert command.words == ("make",)
    assert command.redirects == (
        Redirect(">&", "2", "1"),
        Redirect(">", "", "build.log"),
        Redirect("<", "", "input"),
        Redirect("&>>", "", "all"),
        Redirect(">", "2", "err"),
    )


def test_a_number_apart_from_its_redirection_is_a_word():
    (command,) = parse_command("echo 2 > out").commands
    assert command.words == ("echo", "2")


def test_a_here_document_body_is_no_command_of_the_line():
    parsed = parse_command("cat <<EOF > notes.txt\nrm -rf ~\nit's fine\nEOF\nls")
    assert [c.words for c in parsed.commands] == [("cat",), ("ls",)]
    assert parsed.commands[0].redirects[0].body == "rm -rf ~\nit's fine\n"
    assert "a here-document" in parsed.opaque
    assert "an unbalanced quote" not in parsed.opaque


def test_a_here_document_with_an_unquoted_delimiter_runs_its_substitutions():
    parsed = parse_command("cat <<EOF\n$(rm -rf ~)\nEOF")
    assert [c.words for c in parsed.nested] == [("rm", "-rf", "~")]


def test_a_here_document_with_a_quoted_delimiter_runs_nothing():
    parsed = parse_command("cat <<'EOF'\n$(rm -rf ~)\nEOF")
    assert parsed.nested == ()


def test_a_tab_stripping_here_document_ends_at_its_indented_delimiter():
    parsed = parse_command("cat <<-END\n\tbody\n\tEND\nls")
    assert [c.words for c in parsed.commands] == [("cat",), ("ls",)]


def test_ansi_c_quoting_is_decoded_and_named_opaque():
    parsed = parse_command(r"$'\x72\155' -rf ~")
    assert parsed.commands[0].words == ("rm", "-rf", "~")
    assert "ANSI-C quoting $'...' with escapes" in parsed.opaque


@pytest.mark.parametrize("line", ["", "   ", "# only a comment", ";", "\n\n"])
def test_an_empty_line_has_no_commands(line):
    assert parse_command(line).commands == ()


def test_a_redirection_without_a_target_is_opaque():
    assert "a redirection without a target" in parse_command("echo hi >").opaque


def test_a_line_nested_too_deep_is_unreadable():
    parsed = parse_command("$(" * 40 + "ls" + ")" * 40)
    assert not parsed.readable
    assert parsed.opaque


def test_any_text_is_read_without_an_error():
    pieces = [*"ab $()`'\"\\;&|<>{}#\n\t=-*c~", "bash -c ", "<<E\n", "E\n", "$(", "${", "$'"]
    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        parse_command(text)
