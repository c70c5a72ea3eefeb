// The conversation column: user and assistant messages, notices, tool cards and questions.
// What a model wrote is shown as text, with bidirectional overrides escaped (visible.js).

import { renderMarkdown } from "./markdown.js";
import { ToolCards } from "./tools.js";
import { visible } from "./visible.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

export class Chat {
  constructor(list) {
    this.list = list;
    this.cards = new ToolCards((node) => this.add(node, "item-tool"));
    this.reply = null; // the assistant message being streamed: { node, text }
    this.frame = 0;
  }

  // Append a node; keep the view at the bottom if the reader was already there. With
  // `reveal` (a question or an approval: the agent waits for the reader), show it anyway.
  add(node, className, { reveal = false } = {}) {
    const follow = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
    const item = el("li", `item ${className}`);
    item.append(node);
    this.list.append(item);
    if (follow) window.scrollTo({ top: document.body.scrollHeight });
    else if (reveal) item.scrollIntoView({ block: "start" });
    return item;
  }

  clear() {
    this.list.replaceChildren();
    this.cards = new ToolCards((node) => this.add(node, "item-tool"));
    this.reply = null;
  }

  user(text) {
    this.endReply();
    const bubble = el("div", "msg msg-user");
    bubble.textContent = visible(text);
    this.add(bubble, "item-user");
  }

  assistant(text) {
    this.endReply();
    const bubble = el("div", "msg msg-assistant");
    bubble.append(renderMarkdown(visible(text)));
    this.add(bubble, "item-assistant");
  }

  // A piece of streamed text: rendered (as markdown) at most once per animation frame.
  delta(text) {
    if (!this.reply) {
      const node = el("div", "msg msg-assistant streaming");
      this.add(node, "item-assistant");
      this.reply = { node, text: "" };
    }
    this.reply.text += text;
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.flush();
      });
    }
  }

  flush() {
    if (this.reply) this.reply.node.replaceChildren(renderMarkdown(visible(this.reply.text)));
  }

  // The streamed message is complete (a tool call or the end of the run follows).
  endReply() {
    if (!this.reply) return false;
    this.flush();
    this.reply.node.classList.remove("streaming");
    this.reply = null;
    return true;
  }

  notice(text, kind = "info") {
    const note = el("p", `notice notice-${kind}`, text);
    this.add(note, "item-notice");
  }

  // A question already answered, as the history records it.
  answeredQuestion(args, answer) {
    const box = el("section", "clarify");
    box.dataset.state = "answered";
    box.append(el("h3", "clarify-title", "The agent asked"));
    box.append(el("p", "clarify-question", String(args?.question ?? "")));
    box.append(el("p", "clarify-sent", `Answer: ${answer}`));
    this.add(box, "item-clarify");
  }

  // Rebuild the conversation from a session's saved messages.
  history(messages) {
    this.clear();
    const questions = new Map();
    for (const message of messages) {
      if (message.role === "user") this.user(String(message.content ?? ""));
      else if (message.role === "assistant") {
        if (message.content) this.assistant(String(message.content));
        for (const call of message.tool_calls ?? []) {
          if (call.name === "clarify") questions.set(call.id, parse(call.arguments));
          else this.cards.start(call.id, call.name, call.arguments);
        }
      } else if (message.role === "tool") {
        const content = String(message.content ?? "");
        if (questions.has(message.tool_call_id)) {
          this.answeredQuestion(questions.get(message.tool_call_id), content);
        } else {
          this.cards.finish(message.tool_call_id, message.name, content, content.startsWith("Error:"));
        }
      }
    }
  }
}

function parse(raw) {
  try {
    return JSON.parse(raw);
  } catch {
    return null;
  }
}
