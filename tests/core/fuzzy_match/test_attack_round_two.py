"""Garbled searches of a second attack round: new shapes, and a search quoted with half a unit.

Markdown, TypeScript, Rust and JSON files, added lines that repeat a line of old next to a
line old skips, and searches re-indented with half the file's unit. Each wrong edit found is
now refused; the half-unit search that was refused though its place is unique is written.
"""

from __future__ import annotations

import pytest

from neta.fuzzy_match import AmbiguousMatchError, NoMatchError, fuzzy_replace

GUIDE = """\
# Tool

## Setup

1. Fetch the sources.
2. Build them:

   ```sh
   make all
   ```

3. Run the checks.

## Running

- Start the daemon.
- Open the console.

## Setup

On macOS only:

```sh
make all
```

## Running

- Start the daemon.
"""


@pytest.mark.parametrize(
    "old",
    [
        "```\n\n\n## Running\n\n- Start the daemon.",
        "```\n\n\n## Running\n\n- Start the deamon.",
    ],
    ids=["invented-blank-line", "invented-blank-line-and-typo"],
)
def test_fuzzy_replace_markdown_invented_blank_line_against_a_skipped_text_line_is_ambiguous(old):
    # old has two blank lines after the fence: the last "## Running" with one of them invented,
    # or the first with "3. Run the checks." skipped. A blank line facing a blank line is no
    # evidence, so neither place outranks the other.
    new = old.replace("## Running", "## Usage")

    with pytest.raises(AmbiguousMatchError, match="2 places"):
        fuzzy_replace(GUIDE, old, new)


HANDLER = """\
function guard(app) {
  app.use((req, res, next) => {
    if (!req.user) {
      res.status(401).end();
      return;
    }
    next();
  });
}
"""


def test_fuzzy_replace_added_keyword_line_repeating_old_next_to_a_skipped_line_is_refused():
    # new adds a second "return;": after old's (below the skipped line), or before it, on
    # either side of the skipped "res.status" line. The file's order cannot tell.
    old = "    if (!req.user) {\n      return;\n    }\n    next();\n"
    new = "    if (!req.user) {\n      return;\n      return;\n    }\n    next();\n"

    with pytest.raises(NoMatchError, match=r"line 4 \(old_string skips it\)"):
        fuzzy_replace(HANDLER, old, new)


FETCH = """\
function routes(app) {
  app.get("/a", (req, res) => {
    fetchA(req.query, (err, rows) => {
      if (err) {
        res.status(500).end();
        return;
      }
      res.json(rows);
    });
  });
}
"""


def test_fuzzy_replace_added_opening_line_repeating_old_next_to_a_skipped_line_is_refused():
    # A second "if (err) {" after old's, or before it: on either side of the skipped fetchA.
    old = '  app.get("/a", (req, res) => {\n      if (err) {\n        res.status(500).end();\n'
    new = old.replace("      if (err) {\n", "      if (err) {\n" * 2)

    with pytest.raises(NoMatchError, match=r"line 3 \(old_string skips it\)"):
        fuzzy_replace(FETCH, old, new)


SHAPES_RS = """\
impl Shape {
    pub fn area(&self) -> f64 {
        match self {
            Shape::Square(side) => {
                let side = *side;
                side * side
            }
            Shape::Circle(radius) => radius * radius * 3.14,
        }
    }
}
"""


def test_fuzzy_replace_added_closing_brace_repeating_old_next_to_a_skipped_line_is_refused():
    # One "}" added after old's: it closes the match arm before or after the skipped
    # "side * side", which the file's order cannot tell.
    old = (
        "            Shape::Square(side) => {\n"
        "                let side = *side;\n"
        "            }\n"
        "            Shape::Circle(radius) => radius * radius * 3.14,\n"
    )
    new = old.replace("            }\n", "            }\n            }\n")

    with pytest.raises(NoMatchError, match=r"line 6 \(old_string skips it\)"):
        fuzzy_replace(SHAPES_RS, old, new)


def test_fuzzy_replace_whole_arm_added_after_a_closing_brace_keeps_the_skipped_line_inside():
    old = (
        "            Shape::Square(side) => {\n"
        "                let side = *side;\n"
        "            }\n"
        "            Shape::Circle(radius) => radius * radius * 3.14,\n"
    )
    arm = "            Shape::Dot => {\n                0.0\n            }\n"
    new = old.replace("            }\n", "            }\n" + arm)

    assert fuzzy_replace(SHAPES_RS, old, new).content == SHAPES_RS.replace(
        "            }\n            Shape::Circle",
        "            }\n" + arm + "            Shape::Circle",
    )


LOADER = """\
import json


def load(path):
    try:
        with open(path) as handle:
            text = handle.read()
        value = json.loads(text)
        return value
    except OSError:
        return None


def save(path, value):
    with open(path, "w") as handle:
        handle.write(json.dumps(value))
"""


def test_fuzzy_replace_half_unit_search_ending_in_a_dedented_line_is_written():
    # Quoted with 2 spaces for the file's 4: its other lines, all at one depth, would map by
    # a shift of 6 columns, which puts "except" where no line of the file could be.
    old = "  value = json.loads(text)\n  return value\nexcept OSError:\n"
    new = "  value = json.loads(text)\n  check(value)\n  return value\nexcept OSError:\n"

    assert fuzzy_replace(LOADER, old, new).content == LOADER.replace(
        "        return value\n", "        check(value)\n        return value\n"
    )


def test_fuzzy_replace_half_unit_search_whose_dedented_line_is_two_levels_out_is_refused():
    content = LOADER.replace("    except OSError:", "except OSError:")
    old = "  value = json.loads(text)\n  return value\nexcept OSError:\n"
    new = "  value = json.loads(text)\n  check(value)\n  return value\nexcept OSError:\n"

    with pytest.raises(NoMatchError, match="nested unlike old_string's line 3"):
        fuzzy_replace(content, old, new)


SETTINGS = """\
{
  "server": {
    "hosts": {
      "primary": {
        "port": 8080
      }
    },
    "client": {
      "retries": 3
    }
  }
}
"""


def test_fuzzy_replace_half_unit_search_read_as_shifted_or_halved_is_refused():
    # 3 and 1 columns in a file indented by 2: shifted by 3, "}" closes "client"; with half
    # the unit, it closes "server". The first is lines 9-10 as quoted, the second a line off.
    old = '   "retries": 3\n }'
    new = '   "retries": 3,\n   "timeout": 10\n }'

    with pytest.raises(NoMatchError, match="nested unlike old_string's line 2"):
        fuzzy_replace(SETTINGS, old, new)


def test_fuzzy_replace_half_unit_search_with_a_closing_line_at_the_file_depth_is_written():
    old = '      "port": 8080\n    }\n  },'
    new = '      "port": 8080,\n      "tls": true\n    }\n  },'

    assert fuzzy_replace(SETTINGS, old, new).content == SETTINGS.replace(
        '"port": 8080\n', '"port": 8080,\n        "tls": true\n'
    )
