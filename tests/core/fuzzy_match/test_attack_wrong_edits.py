"""Garbled searches that once made the matcher edit the wrong place, and now are refused.

Each case is a model's plausible mistake (a skipped line, a line copied from elsewhere, the
indentation re-written with another unit or with tabs) that let a looser reading win over the
place the search really describes. A refusal beats a wrong edit: the file stays as it was.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import AmbiguousMatchError, MatchError, NoMatchError, fuzzy_replace
from tests.core.fuzzy_match.code_shapes import JS, PY

POOL = """\
class Pool:
    def run(self, query):
        if self.conn is None:
            self.conn = self.pool.connect()
        try:
            return self.conn.execute(query)
        except Deadlock:  # rolled back: a second try may pass
            if query not in SAFE:
                raise
            return self.conn.execute(query)
        self.reset()
        self.conn = self.pool.connect()
        return self.conn.execute(query)

    def close(self):
        self.pool.close()
"""

STORES = '''\
class Store(Protocol):
    def take(self, key: str) -> bytes:
        """Remove and return the value at ``key``."""

    def save(
        self,
        key: str,
        value: bytes,
    ) -> None:
        """Store ``value`` at ``key``."""


class Remote:
    def take(self, key: str) -> bytes:
        """Remove and return the value at ``key``."""
        return self._client.take(key)

    def save(
        self,
        key: str,
        value: bytes,
    ) -> None:
        self._client.save(key, value)
'''


def test_fuzzy_replace_block_refused_as_nested_unlike_outranks_a_block_sharing_repeated_lines():
    # Indented with half the file's unit and without "try:", old is lines 4-8, refused as
    # nested unlike; lines 12-13 share only its two lines that the file repeats.
    old = (
        "      self.conn = self.pool.connect()\n"
        "      return self.conn.execute(query)\n"
        "    except Deadlock:  # rolled back: a second try may pass\n"
        "      if query not in SAFE:\n"
    )
    new = old.replace("connect()\n", "connect()\n      self.opened += 1\n", 1)

    with pytest.raises(NoMatchError, match="nested unlike old_string's line 3"):
        fuzzy_replace(POOL, old, new)


@pytest.mark.parametrize("dedent", [0, 4], ids=["as-indented", "dedented"])
def test_fuzzy_replace_invented_line_facing_an_unrelated_one_is_no_line_for_line_match(dedent):
    # old has a parameter line copied from below; Store's docstring has no line after it,
    # Remote's has an unrelated one. Neither place matches old better: both are refused.
    old = (
        '        """Remove and return the value at ``key``."""\n'
        "        value: bytes,\n\n"
        "    def save(\n        self,\n        key: str,\n"
    )
    new = old.replace(
        "\n\n    def save", "\n\n    def check(self) -> None:\n        ...\n\n    def save"
    )
    old, new = ("\n".join(line[dedent:] for line in text.split("\n")) for text in (old, new))

    with pytest.raises(AmbiguousMatchError) as caught:
        fuzzy_replace(STORES, old, new)

    assert caught.value.lines == [3, 15]


@pytest.mark.parametrize("trailing", ["\n", "\n\n\n"], ids=["indent-flexible", "trimmed-boundary"])
def test_fuzzy_replace_tab_indented_search_is_not_read_with_a_narrower_tab(trailing):
    # With tabs of 2 columns old's outer log("closed") (two tabs, one level under handle's
    # four) would be the inner one: the added line would land in the for loop.
    old = '\t\t\t\thandle.close()\n\t\tlog("closed")' + trailing
    new = '\t\t\t\thandle.close()\n\t\tlog("done")\n\t\tlog("closed")' + trailing

    with pytest.raises(MatchError, match="nested unlike"):
        fuzzy_replace(PY, old, new)


def test_fuzzy_replace_tab_indented_search_still_matches_a_space_indented_file():
    old = "\t\tfor handle in handles:\n\t\t\tif handle.open:\n\t\t\t\thandle.close()\n"
    new = old.replace("handle.open:", "handle.open and handle.owned:")

    edited = fuzzy_replace(PY, old, new).content

    assert edited == PY.replace("if handle.open:", "if handle.open and handle.owned:")


def test_fuzzy_replace_tab_and_spaces_search_is_not_read_with_a_tab_that_narrow():
    # "\t  " says a tab is wider than two columns: read with 2-column tabs, old's outermost
    # "});" would be the describe("load") one, and the added line would land inside it.
    old = "\t  expect(fs.readFile).toHaveBeenCalledTimes(1);\n\t});\n});\n"
    new = "\t  expect(fs.readFile).toHaveBeenCalledTimes(1);\n\t});\n});\n\tafterAll(done);\n"

    with pytest.raises(MatchError, match="nested unlike"):
        fuzzy_replace(JS, old, new)
