// Tool calls as collapsible cards: name, arguments, result; diffs coloured; errors marked.
// A call is known by its agent and its id: a sub-agent numbers its calls on its own, and may
// reuse an id its parent used. What a card shows is text (visible.js), never HTML.

import { renderDiff } from "./diff.js";
import { visible } from "./visible.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

// The key of a call's card: a sub-agent's call ids are its own.
function keyOf(callId, agentId) {
  return agentId ? `${agentId}\u0000${callId}` : String(callId);
}

function parseArgs(raw) {
  if (raw && typeof raw === "object") return raw;
  try {
    const value = JSON.parse(raw);
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

// One line to recognise the call by: the path, command or question it is about.
function headline(name, args) {
  if (!args) return "";
  const pick = args.path ?? args.command ?? args.question ?? args.query ?? args.name;
  if (typeof pick === "string") return pick.length > 80 ? `${pick.slice(0, 77)}…` : pick;
  if (name === "todo" && Array.isArray(args.todos)) return `${args.todos.length} item(s)`;
  return "";
}

// The diff a result shows, and the text around it: patch returns a unified diff then a
// summary line; write_file's diff is its new text, every line added (it reports no old text).
function diffOf(name, args, content) {
  if (name === "patch") {
    const lines = content.replace(/\r\n?/g, "\n").split("\n");
    const start = lines.findIndex((l) => l.startsWith("--- ") || l.startsWith("@@"));
    if (start < 0) return null;
    let end = start;
    while (end < lines.length && /^([-+ @\\]|$)/.test(lines[end])) end += 1;
    const note = [...lines.slice(0, start), ...lines.slice(end)].join("\n").trim();
    while (end > start && lines[end - 1] === "") end -= 1;
    return { diff: lines.slice(start, end).join("\n"), note };
  }
  if (name === "write_file" && args && typeof args.content === "string") {
    const body = args.content.replace(/\n$/, "").split("\n").map((l) => `+${l}`);
    return { diff: [`+++ ${args.path ?? ""}`, ...body].join("\n"), note: content };
  }
  return null;
}

export class ToolCards {
  constructor(addItem) {
    this.addItem = addItem;
    this.cards = new Map();
  }

  // A card for a call; `agentId` marks a crew sub-agent's call.
  start(callId, name, rawArgs, agentId = null) {
    const key = keyOf(callId, agentId);
    if (this.cards.has(key)) return this.cards.get(key); // seen in the history already
    const args = parseArgs(rawArgs);
    const card = el("details", "tool-card");
    card.dataset.tool = name;
    card.dataset.state = "running";
    const summary = el("summary");
    if (agentId) summary.append(el("span", "agent", agentId));
    summary.append(el("span", "tool-name", name));
    summary.append(el("span", "tool-head", headline(name, args)));
    const state = el("span", "tool-state", "running…");
    summary.append(state);
    card.append(summary);
    const argsBlock = el("div", "tool-args");
    argsBlock.append(el("h4", "", "Arguments"));
    const shown = args && name === "write_file" ? { ...args, content: `(${(args.content ?? "").length} characters, below)` } : args;
    argsBlock.append(el("pre", "", shown ? JSON.stringify(shown, null, 2) : String(rawArgs ?? "")));
    card.append(argsBlock);
    const entry = { card, state, args, name };
    this.cards.set(key, entry);
    this.addItem(card);
    return entry;
  }

  // A call waiting for the user's approval (its card, if shown, says so until it ends).
  waiting(callId, agentId = null) {
    const entry = this.cards.get(keyOf(callId, agentId));
    if (entry && entry.card.dataset.state === "running") entry.state.textContent = "awaiting approval…";
  }

  finish(callId, name, content, isError, durationMs = null, agentId = null) {
    const entry = this.cards.get(keyOf(callId, agentId)) ?? this.start(callId, name, "{}", agentId);
    const { card, state, args } = entry;
    if (card.dataset.state !== "running") return;
    card.dataset.state = isError ? "error" : "done";
    state.textContent = isError ? "error" : durationMs != null ? `${Math.round(durationMs)} ms` : "done";
    const result = el("div", "tool-result");
    result.append(el("h4", "", isError ? "Error" : "Result"));
    const shown = isError ? null : diffOf(name, args, content ?? "");
    if (shown) {
      card.classList.add("has-diff");
      result.append(renderDiff(shown.diff));
      if (shown.note) result.append(el("p", "tool-summary", shown.note));
    } else {
      result.append(el("pre", "", content ?? ""));
    }
    card.append(result);
    if (isError || shown) card.open = true;
  }
}

