"""Where added and changed lines go, and how they are indented, when old lines up loosely.

A changed line takes the indentation of the file line it replaces; an added line goes only
between two lines the file verifiably has, indented as one mapping from old's indentation to
the file's says; and what cannot be told is refused with the line that makes it uncertain.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import MatchError, NoMatchError, fuzzy_replace

FLAT = "def f(x):\n    if x:\n        return 1\n    return 0\n"

# id, content, old, new, expected content
WRITES = [
    pytest.param(
        FLAT,
        "if x:\nreturn 1",
        "if not x:\nreturn 2",
        "def f(x):\n    if not x:\n        return 2\n    return 0\n",
        id="flattened-old-and-new-changed-lines-keep-their-own-indentation",
    ),
    pytest.param(
        FLAT,
        "if x:\nreturn 1\nreturn 0",
        "if not x:\nreturn 2\nreturn 0",
        "def f(x):\n    if not x:\n        return 2\n    return 0\n",
        id="flattened-three-lines-one-kept",
    ),
    pytest.param(
        FLAT,
        "if x:\nreturn 1",
        "if x:\n    log(x)\n    return 1",
        "def f(x):\n    if x:\n        log(x)\n        return 1\n    return 0\n",
        id="flattened-old-added-line-nested-like-new-says",
    ),
    pytest.param(
        "\tif a {\n\t\tb()\n\t}\n",
        "if a {\n\tb()\n}",
        "if a {\n\tb()\n\tc()\n}",
        "\tif a {\n\t\tb()\n\t\tc()\n\t}\n",
        id="tabs-stay-tabs",
    ),
    pytest.param(
        "func a() {\n\tfirst()\n\tsecond()\n\tthird()\n\tfourth()\n\tfifth()\n}\n",
        "  first()\n  secnd()\n  third()\n  fourth()\n  fith()",
        "  first()\n  secnd()\n  third()\n  added()\n  fourth()\n  fith()",
        "func a() {\n\tfirst()\n\tsecond()\n\tthird()\n\tadded()\n\tfourth()\n\tfifth()\n}\n",
        id="context-aware-writes-tabs-into-a-tab-indented-file",
    ),
    pytest.param(
        "class A:\n    def f():\n        a()\n",
        "def f():\n    a()",
        "def f():\n    a()\n    \n    b()",
        "class A:\n    def f():\n        a()\n        \n        b()\n",
        id="whitespace-only-added-line-keeps-its-reindented-whitespace",
    ),
    pytest.param(
        "a = 1\nb = 2\n",
        "a = 1  \nb = 2  ",
        "a = 1  \nb = 3  ",
        "a = 1\nb = 3\n",
        id="garbled-trailing-spaces-are-not-written-back",
    ),
    pytest.param(
        "if a:\n    b = 2\n",
        "if a: \n  b = 2 ",
        "if a: \n  b = 3 \n  c = 4 ",
        "if a:\n    b = 3\n    c = 4\n",
        id="garbled-trailing-spaces-stripped-from-added-lines-too",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), WRITES)
def test_fuzzy_replace_reindented_edit_writes_expected_content(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected


DECORATED = "def e():\n    w.flush()\n\n\n@contextmanager\ndef f(\n    a, b\n):\n    pass\n"

HANDLERS = (
    "app.get('/a', (req, res) => {\n"
    "  db.query(q, (err, rows) => {\n"
    "    res.send(rows);\n"
    "  })\n"
    "})\n"
    "app.get('/b', (req, res) => {\n"
    "  res.send('b');\n"
    "})\n"
)

SPECS = (
    "describe('parse', () => {\n"
    "  it('reads an ISO date', () => {\n"
    "    expect(parse('2024-01-02')).toEqual(day);\n"
    "  });\n"
    "  it('rejects garbage', () => {\n"
    "    expect(() => parse('x')).toThrow();\n"
    "  });\n"
    "});\n"
)

# id, content, old, new, what the message names
UNPLACEABLE = [
    pytest.param(
        DECORATED,
        "    w.flush()\n\n\ndef f(\n    a, b",
        "    w.flush()\n\n\ndef g(): ...\n\n\ndef f(\n    a, b",
        "line 5",
        id="insertion-next-to-a-line-old-skipped",
    ),
    pytest.param(
        HANDLERS,
        "app.get('/a', (req, res) => {\n  db.query(q, (err, row) => {\n    res.send(row);\n})",
        "app.get('/a', (req, res) => {\n  db.query(q, (err, row) => {\n    res.send(row);\n"
        "  log();\n})",
        "line 4",
        id="block-anchor-closer-bound-to-an-inner-closer",
    ),
    pytest.param(
        HANDLERS,
        "app.get('/a', (req, res) => {\n  db.query(q, (err, rows) => {\n    res.send(rows);\n})",
        "app.get('/a', (req, res) => {\n  db.query(q, (err, rows) => {\n    res.send(rows);\n"
        "  log();\n})",
        "line 4",
        id="indent-flexible-closer-bound-to-an-inner-closer",
    ),
    pytest.param(
        SPECS,
        "  it('reads an ISO date', () => {\n    expect(parse('2024-01-02')).toEqual(day);\n"
        "  });\n  it('made up', () => {",
        "  it('reads an ISO date', () => {\n    expect(parse('2024-01-02')).toEqual(day);\n"
        "  });\n  it('extra', () => {});\n  it('made up', () => {",
        "line 5",
        id="context-aware-insertion-next-to-an-invented-line",
    ),
    pytest.param(
        FLAT,
        "if x:\nreturn 1",
        "if x:\nlog(x)\nreturn 1",
        "line 3",
        id="flattened-insertion-between-two-indentations",
    ),
    pytest.param(
        "\tif a {\n\t\tx()\n\t}\n\tx()\n",
        "    x()\n    }",
        "    x()\n    z()\n    }",
        "line 3",
        id="indent-flexible-shift-differs-per-line-around-insertion",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "names"), UNPLACEABLE)
def test_fuzzy_replace_insertion_that_cannot_be_placed_is_refused(content, old, new, names):
    with pytest.raises(MatchError) as caught:
        fuzzy_replace(content, old, new)

    assert type(caught.value) is NoMatchError
    assert names in str(caught.value)
    assert "The file was not changed" in str(caught.value)


MIDDLE = "def f():\n    a = 1\n    b = 2\n    c = 3\nend()\n"

# old_string variants that each make a different strategy match the same three lines
SAME_LINES = [
    pytest.param("    a = 1\n    b = 2\n    c = 3", id="exact"),
    pytest.param("    a = 1 \n    b = 2\n    c = 3", id="line_trimmed"),
    pytest.param("    a  = 1\n    b = 2\n    c = 3", id="whitespace_normalized"),
    pytest.param("a = 1\nb = 2\nc = 3", id="indent_flexible"),
    pytest.param("\n\n    a = 1\n    b = 2\n    c = 3", id="trimmed_boundary"),
    pytest.param("    a = 1\n    b = 22\n    c = 3", id="block_anchor"),
]


@pytest.mark.parametrize("old", SAME_LINES)
@pytest.mark.parametrize("blank", ["\n\n", "\n\n\n"], ids=["one", "two"])
def test_fuzzy_replace_blank_lines_added_at_the_end_come_out_the_same_for_every_strategy(
    old, blank, request
):
    lines = old.strip("\n").split("\n")
    new = "\n".join([*lines[:2], lines[2].replace("3", "4")]) + blank
    added = blank.count("\n") - 1
    expected = MIDDLE.replace("c = 3\n", "c = 4\n" + "\n" * added)

    replacement = fuzzy_replace(MIDDLE, old, new)

    assert replacement.content == expected
    assert replacement.strategy == request.node.callspec.id.split("-", 1)[1]
