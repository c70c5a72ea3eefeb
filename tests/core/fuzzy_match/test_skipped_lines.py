"""A line the model skipped, or wrote though the file lacks it, never moves code.

The search is lined up with the file, so a line it skips stays on the side of the edit the
file puts it, and one it invents is never written. Where the skipped line stands exactly
where the edit writes, the edit is refused and the message names that line. Each case is
in each shape of code: Python blocks, Go and Rust functions, C braces, JavaScript callbacks.
"""

from __future__ import annotations

import os
import random

import pytest

from neta import patch_file
from neta.fuzzy_match import MatchError, NoMatchError, fuzzy_replace
from tests.core.fuzzy_match.code_shapes import GO, JS, PY, RS, SHAPES, C, line_of

GO_TAIL = (
    "\tdata, err := os.ReadFile(use)\n"
    "\tif err != nil {\n"
    '\t\treturn "", fmt.Errorf("load %s: %w", name, err)\n'
    "\t}\n"
)
GO_DROP = "\nfunc (s *Store) Drop(name string) {\n\tdelete(s.cache, name)\n}\n"
GO_SAVE = (
    '\tif err := os.WriteFile(s.root+"/"+name, []byte(data), 0o644); err != nil {\n'
    "\t\treturn err\n\t}\n\ts.cache[name] = data\n\treturn nil\n"
)
GO_PARENT = (
    "\t\treturn data, nil\n\t}\n\tif c.HasParent() {\n\t\tuse = c.Parent() + use\n\t}\n"
    "\tdata, err := os.ReadFile(use)\n"
)
RS_SAVE = (
    '        let path = format!("{}/{}", self.root, name);\n'
    "        if std::fs::write(path, data).is_ok() {\n"
    "        }\n    }\n}\n"
)
RS_CLEAR = "\n    pub fn clear(&mut self) {\n        self.cache.clear();\n    }\n"
JS_CACHES = (
    '      await store.load("a");\n'
    "      expect(fs.readFile).toHaveBeenCalledTimes(1);\n"
    "  });\n});\n"
)
JS_SAVE = (
    '\n  describe("save", () => {\n    it("writes a file", async () => {\n'
    '      await store.save("b", "2");\n    });\n  });\n'
)
C_LOAD = '        log_error("load %s", name);\n        return -1;\n    remember(s, name);\n'
C_CLEAR = "\nstatic void clear(struct store *s)\n{\n    forget_all(s);\n}\n"
PY_LOAD = (
    "        self.cache[name] = data\n        return data\n    def close_all(self, handles):\n"
)
PY_HOST = 'def hostname_allowed(hostname):\n    if hostname.endswith(".internal"):\n'

# id, content, old (a line skipped or invented), new, expected content
WRITES = [
    pytest.param(
        PY,
        PY_HOST + "    return True\n",
        "def hostname_allowed(hostname):\n    log(hostname)\n"
        '    if hostname.endswith(".internal"):\n    return True\n',
        PY.replace(
            "def hostname_allowed(hostname):\n",
            "def hostname_allowed(hostname):\n    log(hostname)\n",
        ),
        id="python-guard-skipped-below-the-insertion",
    ),
    pytest.param(
        PY,
        PY_LOAD + "        for handle in handles:\n",
        PY_LOAD + '        """Close every open handle."""\n        for handle in handles:\n',
        PY.replace(
            "    def close_all(self, handles):\n",
            '    def close_all(self, handles):\n        """Close every open handle."""\n',
        ),
        id="python-blank-line-skipped-above-the-insertion",
    ),
    pytest.param(
        PY,
        "        with open(path) as handle:\n            data = handle.read()\n"
        "            handle.flush()\n        self.cache[name] = data\n",
        "        with open(path) as handle:\n            data = handle.read()\n"
        "            handle.flush()\n        self.cache[name] = data.strip()\n",
        PY.replace("self.cache[name] = data\n", "self.cache[name] = data.strip()\n"),
        id="python-invented-line-is-not-written",
    ),
    pytest.param(
        GO,
        GO_TAIL + "\treturn string(data), nil\n}\n",
        GO_TAIL + "\treturn string(data), nil\n}\n" + GO_DROP,
        GO.replace("\treturn string(data), nil\n}\n", "\treturn string(data), nil\n}\n" + GO_DROP),
        id="go-statement-skipped-before-a-closing-brace",
    ),
    pytest.param(
        GO,
        GO_PARENT,
        GO_PARENT.replace("\tdata, err", '\tlog.Printf("reading %s", use)\n\tdata, err'),
        GO.replace("\tdata, err := os", '\tlog.Printf("reading %s", use)\n\tdata, err := os'),
        id="go-assignment-skipped-above-the-guard",
    ),
    pytest.param(
        GO,
        GO_SAVE.replace("\ts.cache", '\tlog.Printf("saving %s", name)\n\ts.cache'),
        GO_SAVE.replace("\ts.cache", '\tlog.Printf("saving %s", name)\n\ts.cache').replace(
            "= data", "= strings.Clone(data)"
        ),
        GO.replace("s.cache[name] = data\n", "s.cache[name] = strings.Clone(data)\n"),
        id="go-invented-line-is-not-written",
    ),
    pytest.param(
        RS,
        RS_SAVE,
        RS_SAVE.replace("        }\n    }", "        }\n        self.saves += 1;\n    }"),
        RS.replace("        }\n    }\n}\n", "        }\n        self.saves += 1;\n    }\n}\n"),
        id="rust-statement-skipped-above-a-closing-brace",
    ),
    pytest.param(
        RS,
        RS_SAVE,
        RS_SAVE.replace("    }\n}\n", "    }\n" + RS_CLEAR + "}\n"),
        RS.replace("        }\n    }\n}\n", "        }\n    }\n" + RS_CLEAR + "}\n"),
        id="rust-statement-skipped-before-a-closer-run",
    ),
    pytest.param(
        RS,
        '        let path = format!("{}/{}", self.root, name);\n'
        "        let data = std::fs::read_to_string(path).ok()?;\n"
        "        let size = data.len();\n"
        "        self.cache.insert(name.to_string(), data.clone());\n",
        '        let path = format!("{}/{}", self.root, name);\n'
        "        let data = std::fs::read_to_string(path).ok()?;\n"
        "        let size = data.len();\n"
        "        self.cache.insert(name.to_string(), data.clone());\n"
        "        self.hits += 1;\n",
        RS.replace(
            "        self.cache.insert(name.to_string(), data.clone());\n",
            "        self.cache.insert(name.to_string(), data.clone());\n        self.hits += 1;\n",
        ),
        id="rust-invented-line-is-not-written",
    ),
    pytest.param(
        C,
        C_LOAD + "    return 0;\n}\n",
        C_LOAD + "    return 0;\n}\n" + C_CLEAR,
        C.replace(
            "    return 0;\n}\n\nstatic void drop",
            "    return 0;\n}\n" + C_CLEAR + "\nstatic void drop",
        ),
        id="c-closing-brace-skipped-above-the-insertion",
    ),
    pytest.param(
        JS,
        JS_CACHES,
        JS_CACHES.replace("  });\n});\n", "  });\n" + JS_SAVE + "});\n"),
        JS.replace("    });\n  });\n});\n", "    });\n  });\n" + JS_SAVE + "});\n"),
        id="javascript-callback-closer-skipped-in-a-closer-run",
    ),
    pytest.param(
        JS,
        'app.get("/items", (req, res) => {\n  db.query(sql, (err, rows) => {\n'
        "    if (err) {\n      log(err);\n      return res.status(500).end();\n",
        'app.get("/items", (req, res) => {\n  db.query(sql, (err, rows) => {\n'
        "    if (err) {\n      log(err);\n      return res.status(503).end();\n",
        JS.replace("res.status(500)", "res.status(503)"),
        id="javascript-invented-line-is-not-written",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), WRITES)
def test_fuzzy_replace_line_skipped_or_invented_leaves_file_order_intact(
    content, old, new, expected
):
    assert fuzzy_replace(content, old, new).content == expected


# id, content, old (with a line the file lacks), new (writing right next to that line)
NEXT_TO_AN_INVENTED_LINE = [
    pytest.param(
        PY,
        "        with open(path) as handle:\n            data = handle.read()\n"
        "            handle.flush()\n        self.cache[name] = data\n",
        "        with open(path) as handle:\n            data = handle.read()\n"
        "            handle.flush()\n            handle.seek(0)\n        self.cache[name] = data\n",
        id="python",
    ),
    pytest.param(
        GO,
        GO_SAVE.replace("\ts.cache", '\tlog.Printf("saving %s", name)\n\ts.cache'),
        GO_SAVE.replace("\ts.cache", '\tlog.Printf("saving %s", name)\n\tcount++\n\ts.cache'),
        id="go",
    ),
    pytest.param(
        JS,
        'app.get("/items", (req, res) => {\n  db.query(sql, (err, rows) => {\n'
        "    if (err) {\n      log(err);\n      return res.status(500).end();\n",
        'app.get("/items", (req, res) => {\n  db.query(sql, (err, rows) => {\n'
        "    if (err) {\n      log(err);\n      metrics.fail();\n"
        "      return res.status(500).end();\n",
        id="javascript",
    ),
]


@pytest.mark.parametrize(("content", "old", "new"), NEXT_TO_AN_INVENTED_LINE)
def test_fuzzy_replace_lines_added_next_to_an_invented_line_are_refused(content, old, new):
    # Whether the model's extra line stands for a line the file has (then the text goes
    # after it) or for none cannot be told.
    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace(content, old, new)

    assert "(the file has no such line there)" in str(caught.value)


# id, content, old, new, the number of the line the message names
AT_THE_INSERTION = [
    pytest.param(
        PY,
        PY_HOST + "    return True\n",
        PY_HOST + "    log(hostname)\n    return True\n",
        line_of(PY, "return False"),
        id="python-guard-body-skipped-where-lines-are-added",
    ),
    pytest.param(
        PY,
        PY_LOAD + "        for handle in handles:\n",
        PY_LOAD.replace(
            "    def close_all", "    def size(self):\n        return 1\n    def close_all"
        )
        + "        for handle in handles:\n",
        line_of(PY, "def close_all(self, handles):") - 1,
        id="python-blank-line-skipped-where-a-method-is-added",
    ),
    pytest.param(
        GO,
        GO_TAIL + "\treturn string(data), nil\n}\n",
        GO_TAIL + '\tlog.Printf("loaded %s", name)\n\treturn string(data), nil\n}\n',
        line_of(GO, "s.cache[name] = string(data)"),
        id="go-statement-skipped-where-a-line-is-added",
    ),
    pytest.param(
        GO,
        GO_PARENT,
        GO_PARENT.replace("\tif c.Has", '\tlog.Printf("loading %s", name)\n\tif c.Has'),
        line_of(GO, 'use := s.root + "/" + name'),
        id="go-assignment-skipped-where-a-line-is-added",
    ),
    pytest.param(
        RS,
        RS_SAVE,
        RS_SAVE.replace("is_ok() {\n", "is_ok() {\n            self.saves += 1;\n"),
        line_of(RS, "self.cache.insert(name.to_string(), data.to_string());"),
        id="rust-statement-skipped-where-a-line-is-added",
    ),
    pytest.param(
        C,
        C_LOAD + "    return 0;\n}\n",
        C_LOAD.replace("    remember", '    log_info("loaded %s", name);\n    remember')
        + "    return 0;\n}\n",
        line_of(C, "remember(s, name);") - 1,
        id="c-closing-brace-skipped-where-a-line-is-added",
    ),
    pytest.param(
        JS,
        JS_CACHES,
        JS_CACHES.replace("  });\n});", "    spy.reset();\n  });\n});"),
        line_of(JS, "expect(fs.readFile).toHaveBeenCalledTimes(1);") + 1,
        id="javascript-closer-skipped-where-a-line-is-added",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "skipped"), AT_THE_INSERTION)
def test_fuzzy_replace_skipped_line_where_the_edit_writes_is_refused_and_named(
    content, old, new, skipped
):
    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace(content, old, new)

    assert f"line {skipped} (old_string skips it)" in str(caught.value)
    assert "The file was not changed" in str(caught.value)


@pytest.mark.parametrize(("content", "old", "new", "skipped"), AT_THE_INSERTION)
def test_patch_skipped_line_where_the_edit_writes_leaves_the_file_untouched(
    tmp_path, content, old, new, skipped
):
    path = tmp_path / "code.txt"
    path.write_bytes(content.encode())
    os.utime(path, ns=(10**18, 10**18))

    with pytest.raises(MatchError):
        patch_file(path, old, new)

    assert path.read_bytes() == content.encode()
    assert os.stat(path).st_mtime_ns == 10**18


def test_fuzzy_replace_added_lines_sliding_across_a_blank_line_onto_a_skipped_one_are_refused():
    # new adds a blank line and text after old's blank line: the diff may read it as text and
    # a blank line before it, right where the file has the line old skipped.
    content = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    pass\n"
    old = "def f():\n    x = 1\n\n\ndef g():\n"
    new = "def f():\n    x = 1\n\n    y = 2\n\n\ndef g():\n"

    with pytest.raises(NoMatchError, match=r"line 3 \(old_string skips it\)"):
        fuzzy_replace(content, old, new)


def test_fuzzy_replace_added_lines_sliding_across_a_text_line_onto_a_skipped_one_are_refused():
    # new adds a line and a copy of old's "self.cache" line after it: read as that copy and
    # the line added before it, the text lands after the line old skips, not before.
    content = (
        "def load(self, name):\n    with open(path) as handle:\n        data = handle.read()\n"
        "    self.cache[name] = data\n    return data\n"
    )
    old = "    with open(path) as handle:\n    self.cache[name] = data\n    return data\n"
    new = old.replace("    return", "    log(name)\n    self.cache[name] = data\n    return")

    with pytest.raises(NoMatchError, match=r"line 3 \(old_string skips it\)"):
        fuzzy_replace(content, old, new)


def test_fuzzy_replace_block_added_after_a_closing_brace_keeps_the_skipped_line_inside():
    # A closing brace is boilerplate: the diff's reading (close the block, then add one) stands,
    # and the line old skips stays inside the block it was in.
    content = "while (more()) {\n    if (op != '*') {\n        break;\n    }\n    advance();\n}\n"
    old = "    if (op != '*') {\n    }\n    advance();\n"
    new = old.replace("    advance", "    if (ready) {\n        go();\n    }\n    advance")

    assert fuzzy_replace(content, old, new).content == content.replace(
        "    advance", "    if (ready) {\n        go();\n    }\n    advance"
    )


def test_fuzzy_replace_text_added_after_a_blank_line_the_file_lacks_there_is_refused():
    # old claims a blank line before its text; the file has another line there, so text
    # added between them could go before or after it.
    content = "def f():\n    setup()\n    run()\n"
    old = "\n\n    run()"
    new = "\n\n    check()\n    run()"

    with pytest.raises(NoMatchError) as caught:
        fuzzy_replace(content, old, new)

    assert "line 2 (old_string has a blank line here)" in str(caught.value)


def test_fuzzy_replace_text_added_after_a_blank_line_the_file_has_is_written():
    content = "def f():\n    setup()\n\n    run()\n"
    old = "\n\n  run()"
    new = "\n\n  check()\n  run()"

    assert fuzzy_replace(content, old, new).content == (
        "def f():\n    setup()\n\n    check()\n    run()\n"
    )


# Random garbled hunks of every shape: a context line skipped or invented, indentation
# shifted or written with spaces for tabs. The edit is the right one or refused: never moved.


def _hunk(rng: random.Random, lines: list[str]) -> tuple[list[str], list[str], list[str]] | None:
    """A region, its edited form, and the whole file edited: the truth a garble must keep."""
    size = rng.randint(4, 8)
    start = rng.randrange(0, len(lines) - size - 1)
    region = lines[start : start + size]
    if not region[0].strip() or not region[-1].strip():
        return None  # a search's edge blank lines are read as text: no context line there
    at = rng.randint(1, size - 1)
    near = region[at] if region[at].strip() else region[at - 1]
    indent = near[: len(near) - len(near.lstrip())]
    added = [f"{indent}added_{rng.randint(0, 99)}();" for _ in range(rng.randint(1, 3))]
    edited = region[:at] + added + region[at:]
    return region, edited, lines[:start] + edited + lines[start + size :]


def _garbled(
    rng: random.Random, region: list[str], edited: list[str], lines: list[str]
) -> tuple[list[str], list[str]]:
    kept = [offset for offset, line in enumerate(region) if line.strip()]
    if rng.random() < 0.5:
        skipped = rng.choice(kept[1:-1] or kept)
        where = edited.index(region[skipped], skipped)
        old, new = region[:skipped] + region[skipped + 1 :], edited[:where] + edited[where + 1 :]
    else:
        invented = rng.choice([line for line in lines if line.strip()])
        offset = rng.randint(1, len(region) - 1)
        where = edited.index(region[offset], offset)
        old = [*region[:offset], invented, *region[offset:]]
        new = [*edited[:where], invented, *edited[where:]]
    style = rng.random()
    if style < 0.3:
        shift = min(len(line) - len(line.lstrip()) for line in old if line.strip())
        old, new = _dedented(old, shift), _dedented(new, shift)
    elif style < 0.5:
        old, new = (
            [line.replace("\t", "    ") for line in old],
            [line.replace("\t", "    ") for line in new],
        )
    return old, new


def _dedented(lines: list[str], columns: int) -> list[str]:
    return [line[columns:] if not line[:columns].strip() else line.lstrip() for line in lines]


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fuzzy_replace_garbled_hunks_never_edit_the_wrong_place(shape):
    content = SHAPES[shape]
    lines = content.split("\n")
    rng = random.Random(shape)
    done = 0
    while done < 150:
        hunk = _hunk(rng, lines)
        if hunk is None:
            continue
        region, edited, truth = hunk
        old, new = _garbled(rng, region, edited, lines)
        if old == new:
            continue
        done += 1
        try:
            replacement = fuzzy_replace(content, "\n".join(old) + "\n", "\n".join(new) + "\n")
        except MatchError:
            continue
        if replacement.strategy == "exact":
            continue  # old is in the file as written: the model's text says where
        assert replacement.content == "\n".join(truth), (shape, old, new)
