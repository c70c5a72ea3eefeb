"""A block found by similarity must share text with the search, not just boilerplate.

Braces, blank lines, keywords (``return``, ``} else {``, ``if err != nil {``), lines the file
repeats (``changed = true``), and one line of text (which may be one the model wrote from
elsewhere in the file) say nothing about where a search belongs. A block that shares no more
than that is not a match; the search's real place is found, or the edit is refused.
"""

from __future__ import annotations

import os

import pytest

from neta import patch_file
from neta.fuzzy_match import AmbiguousMatchError, MatchError, NoMatchError, fuzzy_replace

# Each file has the block the model means (its lines, in "size"/"report") and a block that
# shares only boilerplate with it, and the one line the model wrote from there ("X").

GO = """\
package store

func (s *Store) Reset() {
\ts.mu.Lock()
\tfor name := range s.cache {
\t\tdelete(s.cache, name)
\t}
\ts.mu.Unlock()
}

func (s *Store) Size() int {
\ttotal := 0
\tfor name, data := range s.cache {
\t\ttotal += len(data)
\t}
\treturn total
}
"""

RS = """\
impl Store {
    fn reset(&mut self) {
        self.lock();
        for name in self.names() {
            self.cache.remove(&name);
        }
        self.unlock();
    }

    fn size(&self) -> usize {
        let mut total = 0;
        for (name, data) in self.cache.iter() {
            total += data.len();
        }
        total
    }
}
"""

C = """\
static void reset(struct store *s)
{
    lock(s);
    for (int i = s->count - 1; i >= 0; i--) {
        release(s->items[i]);
    }
    unlock(s);
}

static size_t size(struct store *s)
{
    size_t total = 0;
    for (int i = 0; i < s->count; i++) {
        total += s->items[i]->length;
    }
    return total;
}
"""

JS = """\
function reset(store) {
  store.lock();
  store.names().forEach((name) => {
    store.cache.delete(name);
  });
  store.unlock();
}

function size(store) {
  let total = 0;
  store.entries().forEach(([name, data]) => {
    total += data.length;
  });
  return total;
}
"""

PY = """\
class Store:
    def reset(self):
        self.lock.acquire()
        for name in list(self.cache):
            del self.cache[name]
        return

    def report(self):
        for name, data in self.cache.items():
            print(name, len(data))
        return
"""

# id, content, old (the invented line X, then the meant block's lines), new, expected
INVENTED_ANCHOR = [
    pytest.param(
        GO,
        "\ts.mu.Lock()\n\tfor name, data := range s.cache {\n\t\ttotal += len(data)\n\t}\n",
        "\ts.mu.Lock()\n\tfor name, data := range s.cache {\n\t\ttotal += len(data)\n\t}\n"
        "\ts.mu.Unlock()\n",
        GO.replace("\t}\n\treturn total", "\t}\n\ts.mu.Unlock()\n\treturn total"),
        id="go",
    ),
    pytest.param(
        RS,
        "        self.lock();\n        for (name, data) in self.cache.iter() {\n"
        "            total += data.len();\n        }\n",
        "        self.lock();\n        for (name, data) in self.cache.iter() {\n"
        "            total += data.len();\n        }\n        self.unlock();\n",
        RS.replace(
            "        }\n        total\n", "        }\n        self.unlock();\n        total\n"
        ),
        id="rust",
    ),
    pytest.param(
        C,
        "    lock(s);\n    for (int i = 0; i < s->count; i++) {\n"
        "        total += s->items[i]->length;\n    }\n",
        "    lock(s);\n    for (int i = 0; i < s->count; i++) {\n"
        "        total += s->items[i]->length;\n    }\n    unlock(s);\n",
        C.replace("    }\n    return total;", "    }\n    unlock(s);\n    return total;"),
        id="c",
    ),
    pytest.param(
        JS,
        "  store.lock();\n  store.entries().forEach(([name, data]) => {\n"
        "    total += data.length;\n  });\n",
        "  store.lock();\n  store.entries().forEach(([name, data]) => {\n"
        "    total += data.length;\n  });\n  store.unlock();\n",
        JS.replace("  });\n  return total;", "  });\n  store.unlock();\n  return total;"),
        id="javascript",
    ),
    pytest.param(
        PY,
        "        self.lock.acquire()\n        for name, data in self.cache.items():\n"
        "            print(name, len(data))\n        return\n",
        "        self.lock.acquire()\n        for name, data in self.cache.items():\n"
        "            print(name, len(data))\n        self.lock.release()\n        return\n",
        PY.replace(
            "            print(name, len(data))\n        return\n",
            "            print(name, len(data))\n        self.lock.release()\n        return\n",
        ),
        id="python",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), INVENTED_ANCHOR)
def test_fuzzy_replace_block_sharing_only_the_invented_line_is_not_the_place(
    content, old, new, expected
):
    # The block after "X" shares X and the closing line with old, and is like it otherwise:
    # the block whose lines old really has is the place.
    assert fuzzy_replace(content, old, new).content == expected


def test_fuzzy_replace_invented_line_and_a_block_each_sharing_as_much_is_refused():
    # Both loops have the same header: the one after "lock(s);" shares that line and the
    # header with old, the other the header and its body. Each lacks one line of old.
    content = C.replace(
        "for (int i = s->count - 1; i >= 0; i--)", "for (int i = 0; i < s->count; i++)"
    )
    old = (
        "    lock(s);\n    for (int i = 0; i < s->count; i++) {\n"
        "        total += s->items[i]->length;\n    }\n"
    )

    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace(content, old, old + "    unlock(s);\n")

    assert caught.value.lines == [3, 12]


# id, content, old (boilerplate and one line of text), new
BOILERPLATE_ONLY = [
    pytest.param(
        GO + "\nfunc check(err error) error {\n\tif err != nil {\n\t\treturn err\n\t}\n"
        "\treturn nil\n}\n",
        "\tif err != nil {\n\t\treturn err\n\t}\n\treturn validate(s)\n",
        "\tif err != nil {\n\t\treturn err\n\t}\n\treturn validate(s, true)\n",
        id="go-error-check-and-one-line",
    ),
    pytest.param(
        RS,
        "            self.cache.clear_all();\n        }\n        self.unlock();\n    }\n",
        "            self.cache.clear_all();\n        }\n        self.unlock();\n    }\n\n"
        "    fn clear(&mut self) {}\n",
        id="rust-closers-and-one-line",
    ),
    pytest.param(
        C,
        "    }\n    unlock(s);\n}\n\nstatic void flush(struct store *s)\n{\n",
        "    }\n    unlock(s);\n}\n\nstatic void flush(struct store *s)\n{\n    sync(s);\n",
        id="c-braces-and-one-line",
    ),
    pytest.param(
        JS,
        "    count += item.weight;\n  });\n  return total;\n}\n",
        "    count += item.weight;\n  });\n  return total;\n}\n\nexport { size };\n",
        id="javascript-callback-closers-and-one-line",
    ),
    pytest.param(
        PY,
        "            self.cache.pop(key)\n        return\n\n    def report(self):\n",
        "            self.cache.pop(key)\n        return\n\n    def report(self, out):\n",
        id="python-return-blank-and-one-line",
    ),
]


@pytest.mark.parametrize(("content", "old", "new"), BOILERPLATE_ONLY)
def test_fuzzy_replace_block_sharing_only_boilerplate_is_no_match(content, old, new):
    with pytest.raises(NoMatchError, match="was not found"):
        fuzzy_replace(content, old, new)


@pytest.mark.parametrize(("content", "old", "new"), BOILERPLATE_ONLY)
def test_patch_block_sharing_only_boilerplate_leaves_the_file_untouched(
    tmp_path, content, old, new
):
    path = tmp_path / "code.txt"
    path.write_bytes(content.encode())
    os.utime(path, ns=(10**18, 10**18))

    with pytest.raises(MatchError):
        patch_file(path, old, new)

    assert path.read_bytes() == content.encode()
    assert os.stat(path).st_mtime_ns == 10**18


FLAGS = """\
function link(node) {
  let changed = false
  if (node.target.dev && !node.dev) {
    node.target.dev = false
    changed = true
  }
  if (node.target.optional && !node.optional) {
    node.target.optional = false
    changed = true
  }
  if (node.target.peer && !node.peer) {
    node.target.peer = false
    changed = true
  }
  if (changed || !seen.has(node.target)) {
    queue.push(node.target)
  }
}
"""


def test_fuzzy_replace_lines_the_file_repeats_and_lines_it_has_elsewhere_are_no_evidence():
    # old quotes the "optional" flag's block and ends with a line from further down. The
    # "peer" block ends right before that line: it shares it, a "}" and "changed = true"
    # (which the file repeats), and lines merely like old's, which the file has verbatim at
    # the "optional" block. That block, not the "peer" one, is where old belongs.
    old = (
        "  }\n  if (node.target.optional && !node.optional) {\n"
        "    node.target.optional = false\n    changed = true\n  }\n"
        "  if (changed || !seen.has(node.target)) {\n"
    )
    new = old.replace("    changed = true\n  }\n", "    changed = true\n  } // optional\n")

    assert fuzzy_replace(FLAGS, old, new).content == FLAGS.replace(
        "    node.target.optional = false\n    changed = true\n  }\n",
        "    node.target.optional = false\n    changed = true\n  } // optional\n",
    )


LOOPS = """\
def check_all(items):
    for item in items:
        check(item)
    return len(items)


def send_all(items):
    for item in items:
        send(item)
    return len(items)


def store_all(items):
    for item in items:
        store(item)
    return len(items)
"""


def test_fuzzy_replace_line_the_file_repeats_next_to_a_rare_one_is_evidence_with_it():
    # "for item in items:" is in the file three times, but only once right before
    # "send(item)": as a pair they say where old is, though "total = 0" is invented.
    old = "    total = 0\n    for item in items:\n        send(item)\n    return len(items)\n"
    new = old.replace("    return", "    log(items)\n    return")

    assert fuzzy_replace(LOOPS, old, new).content == LOOPS.replace(
        "        send(item)\n", "        send(item)\n    log(items)\n"
    )


# id, content, old (a line mistyped), new, expected: two lines of text are shared
TYPOS = [
    pytest.param(
        GO,
        "\ttotal := 0\n\tfor name, data := range s.cahce {\n\t\ttotal += len(data)\n\t}\n",
        "\ttotal := 0\n\tfor name, data := range s.cahce {\n\t\ttotal += len(data) + 1\n\t}\n",
        GO.replace("total += len(data)\n", "total += len(data) + 1\n"),
        id="go",
    ),
    pytest.param(
        JS,
        "  let total = 0;\n  store.entries().forEach(([name, dat]) => {\n"
        "    total += data.length;\n  });\n",
        "  let total = 0;\n  store.entries().forEach(([name, dat]) => {\n"
        "    total += data.length * 2;\n  });\n",
        JS.replace("total += data.length;", "total += data.length * 2;"),
        id="javascript",
    ),
    pytest.param(
        PY,
        "    def report(self):\n        for name, data in self.cache.itmes():\n"
        "            print(name, len(data))\n",
        "    def report(self):\n        for name, data in self.cache.itmes():\n"
        "            print(name, len(data), sep=': ')\n",
        PY.replace("print(name, len(data))", "print(name, len(data), sep=': ')"),
        id="python",
    ),
]


@pytest.mark.parametrize(("content", "old", "new", "expected"), TYPOS)
def test_fuzzy_replace_mistyped_search_sharing_text_still_edits(content, old, new, expected):
    assert fuzzy_replace(content, old, new).content == expected
