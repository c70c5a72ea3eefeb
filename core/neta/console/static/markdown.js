// Markdown to DOM nodes, safely: every piece of text becomes a text node, never HTML.
// Supported: paragraphs, # headings, - and 1. lists, > quotes, ``` fenced code, `code`,
// **bold**, *italic*, [links](https://...) (http, https and mailto only). A unified diff is
// shown coloured, fenced as ```diff or not fenced at all (its - and + lines are no list).

import { diffEndsAt, diffStartsAt, renderDiff } from "./diff.js";

const SAFE_LINK = /^(https?:|mailto:)/i;

function el(tag, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  return node;
}

// Inline spans: code first (its content is literal), then links, bold, italic.
const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|\b_([^_\n]+)_\b/g;

export function renderInline(text, parent) {
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) parent.append(text.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[2] !== undefined) {
      const code = el("code");
      code.textContent = match[2];
      parent.append(code);
    } else if (match[3] !== undefined) {
      const href = match[4];
      if (SAFE_LINK.test(href)) {
        const link = el("a");
        link.href = href;
        link.rel = "noopener noreferrer";
        link.target = "_blank";
        renderInline(match[3], link);
        parent.append(link);
      } else {
        parent.append(match[0]);
      }
    } else if (match[5] !== undefined || match[6] !== undefined) {
      const strong = el("strong");
      renderInline(match[5] ?? match[6], strong);
      parent.append(strong);
    } else {
      const em = el("em");
      renderInline(match[7] ?? match[8], em);
      parent.append(em);
    }
  }
  if (last < text.length) parent.append(text.slice(last));
}

const FENCE = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;

// Render `source` into a fragment. An unclosed fence (text still streaming) runs to the end.
export function renderMarkdown(source) {
  const out = document.createDocumentFragment();
  const lines = source.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      if (/^(diff|patch)$/i.test(fence[2])) {
        out.append(renderDiff(body.join("\n")));
        continue;
      }
      const pre = el("pre", "code-block");
      const code = el("code");
      if (fence[2]) code.dataset.lang = fence[2];
      code.textContent = body.join("\n");
      pre.append(code);
      out.append(pre);
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    if (diffStartsAt(lines, i)) {
      const end = diffEndsAt(lines, i);
      out.append(renderDiff(lines.slice(i, end).join("\n")));
      i = end;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const h = el(`h${Math.min(heading[1].length + 2, 6)}`);
      renderInline(heading[2], h);
      out.append(h);
      i += 1;
      continue;
    }
    const kind = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : null;
    if (kind) {
      const list = el(kind === BULLET ? "ul" : "ol");
      while (i < lines.length && kind.test(lines[i])) {
        const item = el("li");
        renderInline(kind.exec(lines[i])[1], item);
        list.append(item);
        i += 1;
      }
      out.append(list);
      continue;
    }
    if (QUOTE.test(line)) {
      const quote = el("blockquote");
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) body.push(QUOTE.exec(lines[i++])[1]);
      quote.append(renderMarkdown(body.join("\n")));
      out.append(quote);
      continue;
    }
    const para = el("p");
    const body = [];
    while (
      i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) &&
      !BULLET.test(lines[i]) && !NUMBERED.test(lines[i]) && !QUOTE.test(lines[i]) &&
      !diffStartsAt(lines, i)
    ) {
      body.push(lines[i++]);
    }
    body.forEach((text, n) => {
      if (n) para.append(el("br"));
      renderInline(text, para);
    });
    out.append(para);
  }
  return out;
}
