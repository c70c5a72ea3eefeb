"""Small source files in the shapes the matcher must not misplace edits in.

Python (blocks by indentation), Go (tabs, braces), Rust (braces, 4 spaces), C (braces on their
own lines) and JavaScript (nested callbacks closed by ``});`` runs). Tests quote them with
lines skipped, lines written that the files lack, and indentation off, as models do.
"""

from __future__ import annotations

PY = """\
import os


class Store:
    def __init__(self, root):
        self.root = root
        self.cache = {}

    def load(self, name):
        path = os.path.join(self.root, name)
        if name in self.cache:
            return self.cache[name]
        with open(path) as handle:
            data = handle.read()
        self.cache[name] = data
        return data

    def close_all(self, handles):
        for handle in handles:
            if handle.open:
                handle.close()
            log("closed")
        log("closed")


def hostname_allowed(hostname):
    if hostname.endswith(".internal"):
        return False
    return True
"""

GO = """\
package store

import (
\t"fmt"
\t"os"
)

type Store struct {
\troot  string
\tcache map[string]string
}

func (s *Store) Load(name string) (string, error) {
\tif data, ok := s.cache[name]; ok {
\t\treturn data, nil
\t}
\tuse := s.root + "/" + name
\tif c.HasParent() {
\t\tuse = c.Parent() + use
\t}
\tdata, err := os.ReadFile(use)
\tif err != nil {
\t\treturn "", fmt.Errorf("load %s: %w", name, err)
\t}
\ts.cache[name] = string(data)
\treturn string(data), nil
}

func (s *Store) Save(name, data string) error {
\tif err := os.WriteFile(s.root+"/"+name, []byte(data), 0o644); err != nil {
\t\treturn err
\t}
\ts.cache[name] = data
\treturn nil
}
"""

RS = """\
use std::collections::HashMap;

pub struct Store {
    root: String,
    cache: HashMap<String, String>,
}

impl Store {
    pub fn load(&mut self, name: &str) -> Option<String> {
        if let Some(data) = self.cache.get(name) {
            return Some(data.clone());
        }
        let path = format!("{}/{}", self.root, name);
        let data = std::fs::read_to_string(path).ok()?;
        self.cache.insert(name.to_string(), data.clone());
        Some(data)
    }

    pub fn save(&mut self, name: &str, data: &str) {
        let path = format!("{}/{}", self.root, name);
        if std::fs::write(path, data).is_ok() {
            self.cache.insert(name.to_string(), data.to_string());
        }
    }
}
"""

C = """\
#include "store.h"

static int load(struct store *s, const char *name)
{
    if (lookup(s, name)) {
        return 0;
    }
    if (read_file(s, name) < 0) {
        log_error("load %s", name);
        return -1;
    }
    remember(s, name);
    return 0;
}

static void drop(struct store *s, const char *name)
{
    forget(s, name);
}
"""

JS = """\
describe("store", () => {
  beforeEach(() => {
    store.clear();
  });

  describe("load", () => {
    it("reads a file", async () => {
      await store.save("a", "1");
      expect(await store.load("a")).toBe("1");
    });

    it("caches what it read", async () => {
      await store.load("a");
      expect(fs.readFile).toHaveBeenCalledTimes(1);
    });
  });
});

app.get("/items", (req, res) => {
  db.query(sql, (err, rows) => {
    if (err) {
      return res.status(500).end();
    }
    res.json(rows);
  });
});
"""

SHAPES = {"python": PY, "go": GO, "rust": RS, "c": C, "javascript": JS}
"""Every shape by name."""


def line_of(content: str, text: str) -> int:
    """The 1-based number of the one line of ``content`` that is ``text`` (stripped)."""
    numbers = [
        number for number, line in enumerate(content.split("\n"), 1) if line.strip() == text.strip()
    ]
    assert len(numbers) == 1, (text, numbers)
    return numbers[0]
