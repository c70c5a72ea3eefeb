"""With indentation ignored, a closing line binds only the block at its depth.

Matching lines by their text alone, a search's ``}`` finds any ``}``: an inner one as well as
the one it closes. Where the search's own indentation says which block it closes, a match
that nests it otherwise is refused, naming the line; where the search says nothing (all its
lines indented alike) and the file repeats the line at the block's edge, an edit at that
edge is refused too. Searches whose indentation is merely shifted, re-indented with another
unit, or lost on their first line still edit, at the right depth.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import NoMatchError, fuzzy_replace
from tests.core.fuzzy_match.code_shapes import GO, JS, PY, RS, C, line_of

GO_DROP = "\n\nfunc (s *Store) Drop(name string) {\n\tdelete(s.cache, name)\n}"
RS_CLEAR = "\n\n    pub fn clear(&mut self) {\n        self.cache.clear();\n    }"
JS_SAVE = '\n\n  describe("save", () => {\n    it("writes", () => {});\n  });'
C_CLEAR = "\n\nstatic void clear(struct store *s)\n{\n    forget_all(s);\n}"

# id, content, old (a closing line's depth unlike the file line its text matches), new,
# the line the message names
NESTED_UNLIKE = [
    pytest.param(
        PY,
        '                handle.close()\n        log("closed")',
        '                handle.close()\n        log("closed")\n        return len(handles)',
        line_of(PY, "handle.close()") + 1,
        id="python-dedent-bound-to-the-inner-block",
    ),
    pytest.param(
        GO,
        "\t\treturn err\n}",
        "\t\treturn err\n}" + GO_DROP,
        line_of(GO, "return err") + 1,
        id="go-closing-brace-bound-to-the-if",
    ),
    pytest.param(
        RS,
        "            self.cache.insert(name.to_string(), data.to_string());\n    }",
        "            self.cache.insert(name.to_string(), data.to_string());\n    }" + RS_CLEAR,
        line_of(RS, "self.cache.insert(name.to_string(), data.to_string());") + 1,
        id="rust-closing-brace-bound-to-the-if",
    ),
    pytest.param(
        C,
        "        return -1;\n}",
        "        return -1;\n}" + C_CLEAR,
        line_of(C, "return -1;") + 1,
        id="c-closing-brace-bound-to-the-if",
    ),
    pytest.param(
        JS,
        "      expect(fs.readFile).toHaveBeenCalledTimes(1);\n  });",
        "      expect(fs.readFile).toHaveBeenCalledTimes(1);\n  });" + JS_SAVE,
        line_of(JS, "expect(fs.readFile).toHaveBeenCalledTimes(1);") + 1,
        id="javascript-callback-closer-bound-to-the-inner-callback",
    ),
    pytest.param(
        GO,
        "    }\n\nfunc (s *Store) Save(name, data string) error {",
        "    }\n\tlog.Print(name)\n\nfunc (s *Store) Save(name, data string) error {",
        line_of(GO, "func (s *Store) Save(name, data string) error {") - 2,
        id="go-first-line-of-trimmed-search-bound-to-the-outer-brace",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "named"), NESTED_UNLIKE)
def test_fuzzy_replace_closing_line_matched_at_another_depth_is_refused_and_named(
    content, old, new, named
):
    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace(content, old, new)

    message = str(caught.value)
    assert f"there line {named} is nested unlike old_string's line" in message
    assert "columns" in message
    assert "The file was not changed" in message


# id, content, old (indented all alike), new (writing at an edge the file repeats)
FLAT_AT_A_REPEATED_EDGE = [
    pytest.param(
        RS,
        "if std::fs::write(path, data).is_ok() {\n"
        "self.cache.insert(name.to_string(), data.to_string());\n}",
        "if std::fs::write(path, data).is_ok() {\n"
        "self.cache.insert(name.to_string(), data.to_string());\n}" + RS_CLEAR,
        id="rust",
    ),
    pytest.param(
        JS,
        'await store.load("a");\nexpect(fs.readFile).toHaveBeenCalledTimes(1);\n});',
        'await store.load("a");\nexpect(fs.readFile).toHaveBeenCalledTimes(1);\n});' + JS_SAVE,
        id="javascript",
    ),
    pytest.param(
        GO,
        "s.cache[name] = data\nreturn nil\n}",
        "s.cache[name] = data\nreturn nil\n}" + GO_DROP,
        id="go-file-repeats-nothing-but-a-blank-line",
    ),
]


@pytest.mark.parametrize(("content", "old", "new"), FLAT_AT_A_REPEATED_EDGE)
def test_fuzzy_replace_flattened_search_writing_at_a_repeated_closing_line_is_refused(
    request, content, old, new
):
    if request.node.callspec.id.startswith("go"):
        # The file's next line is blank, not another "}": the edge is the search's own.
        assert fuzzy_replace(content, old, new).content == content.replace(
            "\ts.cache[name] = data\n\treturn nil\n}\n",
            "\ts.cache[name] = data\n\treturn nil\n}" + GO_DROP + "\n",
        )
        return
    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace(content, old, new)

    assert "has the same line again right after it" in str(caught.value)


# id, content, old (indentation off, but nested as the file is), new, expected
AT_ITS_DEPTH = [
    pytest.param(
        GO,
        "        return err\n    }\n    s.cache[name] = data\n    return nil\n}",
        "        return err\n    }\n    s.cache[name] = data\n    return nil\n}" + GO_DROP,
        GO.rstrip("\n") + GO_DROP + "\n",
        id="go-spaces-for-tabs-closing-brace-at-its-depth",
    ),
    pytest.param(
        JS,
        '    await store.load("a");\n    expect(fs.readFile).toHaveBeenCalledTimes(1);\n  });\n});',
        '    await store.load("a");\n    expect(fs.readFile).toHaveBeenCalledTimes(1);\n  });\n'
        '});\n\ndescribe("save", () => {\n  it("writes", () => {});\n});',
        JS.replace("    });\n  });\n});\n", "    });\n  });" + JS_SAVE + "\n});\n"),
        id="javascript-dedented-closers-at-their-depth",
    ),
    pytest.param(
        PY,
        "def close_all(self, handles):\n        for handle in handles:\n"
        "            if handle.open:",
        "def close_all(self, handles):\n        for handle in handles:\n"
        "            if handle.open and not handle.shared:",
        PY.replace("if handle.open:", "if handle.open and not handle.shared:"),
        id="python-first-line-copied-from-mid-line",
    ),
    pytest.param(
        PY,
        'def hostname_allowed(hostname):\n  if hostname.endswith(".internal"):\n'
        "    return False\n  return True",
        'def hostname_allowed(hostname):\n  if hostname.endswith(".internal"):\n'
        "    return False\n  return True\n\n\ndef port_allowed(port):\n  return port > 1024",
        PY + "\n\ndef port_allowed(port):\n    return port > 1024\n",
        id="python-two-space-unit-for-a-four-space-file",
    ),
    pytest.param(
        RS,
        "    if std::fs::write(path, data).is_ok() {\n"
        "        self.cache.insert(name.to_string(), data.to_string());\n    }\n}",
        "    if std::fs::write(path, data).is_ok() {\n"
        "        self.cache.insert(name.to_string(), data.to_string());\n    }\n}\n\n"
        "pub fn clear(&mut self) {\n    self.cache.clear();\n}",
        RS.replace("        }\n    }\n}\n", "        }\n    }" + RS_CLEAR + "\n}\n"),
        id="rust-shifted-closer-run-at-its-depth",
    ),
    pytest.param(
        C,
        'if (read_file(s, name) < 0) {\n    log_error("load %s", name);\n'
        "    return -1;\n}\nremember(s, name);",
        'if (read_file(s, name) < 0) {\n    log_error("load %s", name);\n'
        "    return -1;\n}\nremember(s, name);\ncount(s);",
        C.replace("    remember(s, name);\n", "    remember(s, name);\n    count(s);\n"),
        id="c-dedented-block-at-its-depth",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), AT_ITS_DEPTH)
def test_fuzzy_replace_closing_line_at_its_depth_is_edited_there(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected
