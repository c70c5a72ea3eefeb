// Unified diffs: shown as lines coloured by their first character, and found in a reply's
// text when the model wrote one without a ``` fence (it would read as list bullets).

import { visible } from "./visible.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// A unified diff as lines coloured by their first character.
export function renderDiff(text) {
  const pre = el("pre", "diff");
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    let kind = "context";
    if (line.startsWith("+++") || line.startsWith("---")) kind = "file";
    else if (line.startsWith("@@")) kind = "hunk";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    const row = el("span", `diff-line diff-${kind}`, visible(line));
    pre.append(row);
  }
  return pre;
}

const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/;
const HEADER = /^(diff --git |index |--- |\+\+\+ |new file mode |deleted file mode |similarity index |rename (from|to) |old mode |new mode |Binary files )/;

// Whether a diff starts at line `i`: `diff --git`, `--- ` over `+++ `, or a hunk's `@@`.
export function diffStartsAt(lines, i) {
  const line = lines[i];
  if (line.startsWith("diff --git ") || HUNK.test(line)) return true;
  return line.startsWith("--- ") && (lines[i + 1] ?? "").startsWith("+++ ");
}

// The line after the diff that starts at line `start`. A hunk takes the lines its header
// counts (a blank one is an empty context line); past them, more lines that start with
// +, - or a space still belong to it (a model miscounts), and anything else ends it.
export function diffEndsAt(lines, start) {
  let i = start;
  let before = 0; // the hunk's lines still to come: old side, new side
  let after = 0;
  while (i < lines.length) {
    const line = lines[i];
    const hunk = HUNK.exec(line);
    if (hunk) {
      before = hunk[1] === undefined ? 1 : Number(hunk[1]);
      after = hunk[2] === undefined ? 1 : Number(hunk[2]);
    } else if (before > 0 || after > 0) {
      const mark = line[0] ?? " ";
      if (mark === " ") {
        before -= 1;
        after -= 1;
      } else if (mark === "-") before -= 1;
      else if (mark === "+") after -= 1;
      else if (mark !== "\\") break;
    } else if (!HEADER.test(line) && !/^[-+ \\]./.test(line)) {
      break;
    }
    i += 1;
  }
  while (i > start && !lines[i - 1].trim()) i -= 1;
  return i;
}
