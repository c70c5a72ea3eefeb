"""``sanitize``: text from models, tools and storage shown on a terminal, never obeyed by it."""

import json

import pytest

from neta.paths import printable
from neta.terminal_text import json_escaped, sanitize

C0 = [chr(code) for code in range(0x20) if chr(code) not in "\n\t"]
C1_AND_DEL = [chr(code) for code in range(0x7F, 0xA0)]
BIDI = [chr(code) for code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]


def test_sanitize_shows_an_escape_sequence_as_a_visible_backslash_escape():
    assert sanitize("\x1b[3A\x1b[2Kok") == r"\x1b[3A\x1b[2Kok"
    assert sanitize("\x1b]52;c;cm0gLXJmIH4=\x07") == r"\x1b]52;c;cm0gLXJmIH4=\x07"


def test_sanitize_shows_a_carriage_return_so_it_cannot_overwrite_the_line():
    assert sanitize("rm -rf ~\rls") == r"rm -rf ~\rls"
    assert sanitize("\r") == r"\r"


def test_sanitize_shows_a_windows_line_end_as_a_line_end():
    assert sanitize("one\r\ntwo\r\n") == "one\ntwo\n"


@pytest.mark.parametrize("char", C0 + C1_AND_DEL + BIDI, ids=lambda c: f"U+{ord(c):04X}")
def test_sanitize_shows_each_control_and_bidi_character_as_printable_shows_it_in_a_name(char):
    shown = sanitize(f"a{char}b")
    assert shown == f"a{printable(char)}b"
    assert shown.isprintable()


def test_sanitize_shows_a_c1_csi_and_a_bidi_override_by_their_code():
    assert sanitize("\x9b2J") == r"\x9b2J"
    assert sanitize("\u202etxt.exe\u202c") == r"\u202etxt.exe\u202c"


def test_sanitize_keeps_newlines_tabs_and_the_text_of_every_script():
    text = "def f():\n\treturn 1\n日本語 שלום \u200f مرحبا 👩\u200d💻 10\u00a0€ soft\u00adhyphen"
    assert sanitize(text) == text


def test_json_escaped_writes_controls_and_bidi_as_json_escapes_losslessly():
    value = {"text": "a\x1b]0;t\x07\x7f\x9b2J\u202eb\u2069\r\n", "名": "日本"}
    text = json_escaped(json.dumps(value, ensure_ascii=False))
    assert all(char not in text for char in C0 + C1_AND_DEL + BIDI)
    assert r"\u009b" in text
    assert r"\u202e" in text
    assert "日本" in text
    assert json.loads(text) == value
