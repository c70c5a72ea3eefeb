// A question from the agent: one button per choice, a free-text answer, a countdown, and
// afterwards what was sent and how the question ended (clarify_resolved).

import { visible } from "./visible.js";

const OUTCOMES = {
  answered: "answered",
  timed_out: "timed out: the agent decides for itself",
  cancelled: "cancelled",
  closed: "closed while this page was away",
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

// What a countdown shows with `left` seconds to go: "42 s to answer", "4:59 to answer".
export function timeLeft(left) {
  if (left <= 0) return "time is up";
  if (left < 60) return `${left} s to answer`;
  const seconds = String(left % 60).padStart(2, "0");
  return `${Math.floor(left / 60)}:${seconds} to answer`;
}

// When this tab first saw a question (or approval), so that a reload keeps counting down
// from there.
export function firstSeen(requestId) {
  const key = `neta.asked.${requestId}`;
  const now = Date.now();
  const seen = Number(sessionStorage.getItem(key));
  if (seen > 0 && seen <= now) return seen;
  sessionStorage.setItem(key, String(now));
  return now;
}

export class ClarifyPrompts {
  // `answer(requestId, text)` sends the answer; it returns false when not connected.
  constructor(addItem, answer) {
    this.addItem = addItem;
    this.answer = answer;
    this.timeoutSeconds = 300; // the server's clarifyTimeout replaces it
    this.prompts = new Map();
  }

  // Show a question (again, after a reconnect: an existing prompt is kept, not duplicated).
  ask({ requestId, question, choices }) {
    const known = this.prompts.get(requestId);
    if (known) {
      if (known.state === "sent") known.setState("pending"); // the answer did not arrive
      return known;
    }
    const box = el("section", "clarify");
    box.dataset.requestId = requestId;
    box.dataset.state = "pending";
    box.setAttribute("aria-label", "Question from the agent");
    box.append(el("h3", "clarify-title", "The agent asks"));
    box.append(el("p", "clarify-question", String(question ?? "")));

    const buttons = el("div", "clarify-choices");
    for (const choice of Array.isArray(choices) ? choices : []) {
      const button = el("button", "choice", String(choice));
      button.type = "button";
      button.addEventListener("click", () => prompt.send(String(choice)));
      buttons.append(button);
    }
    const form = el("form", "clarify-free");
    const input = el("input");
    input.type = "text";
    input.placeholder = choices && choices.length ? "…or type another answer" : "Your answer";
    input.setAttribute("aria-label", "Your answer");
    const submit = el("button", "", "Answer");
    submit.type = "submit";
    form.append(input, submit);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) prompt.send(input.value);
    });
    const countdown = el("p", "clarify-countdown");
    const sent = el("p", "clarify-sent");
    sent.hidden = true;
    const outcome = el("p", "clarify-outcome");
    outcome.hidden = true;
    box.append(buttons, form, countdown, sent, outcome);

    const deadline = firstSeen(requestId) + this.timeoutSeconds * 1000;
    const prompt = {
      state: "pending",
      box,
      setState: (state) => {
        prompt.state = state;
        box.dataset.state = state;
        const open = state === "pending";
        for (const control of box.querySelectorAll("button, input")) control.disabled = !open;
      },
      send: (text) => {
        if (prompt.state !== "pending") return;
        if (!this.answer(requestId, text)) return;
        sent.textContent = `You answered: ${visible(text)}`;
        sent.hidden = false;
        prompt.setState("sent");
      },
      tick: () => {
        if (prompt.state !== "pending" && prompt.state !== "sent") return;
        const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
        countdown.textContent = timeLeft(left);
        countdown.classList.toggle("urgent", left <= 5);
      },
      resolve: (how) => {
        clearInterval(timer);
        sessionStorage.removeItem(`neta.asked.${requestId}`);
        prompt.setState(how);
        countdown.hidden = true;
        outcome.textContent = `Outcome: ${OUTCOMES[how] ?? how}`;
        outcome.hidden = false;
      },
      refuse: (message) => {
        outcome.textContent = message;
        outcome.hidden = false;
      },
    };
    const timer = setInterval(prompt.tick, 250);
    prompt.stop = () => clearInterval(timer);
    prompt.tick();
    this.prompts.set(requestId, prompt);
    this.addItem(box);
    const first = buttons.querySelector("button") ?? input;
    first.focus({ preventScroll: true });
    return prompt;
  }

  // Forget every prompt (the conversation is rebuilt from the history).
  reset() {
    for (const prompt of this.prompts.values()) prompt.stop();
    this.prompts.clear();
  }

  resolved(requestId, how) {
    this.prompts.get(requestId)?.resolve(how);
  }

  // An answer the server refused (e.g. expired): say so on the newest unsettled prompt.
  refused(message) {
    const open = [...this.prompts.values()].filter((p) => p.state === "sent" || p.state === "pending");
    const prompt = open.pop();
    if (!prompt) return false;
    prompt.refuse(message);
    return true;
  }

  // Questions the server no longer holds as pending (after a reconnect) are over.
  keepOnly(requestIds) {
    for (const [id, prompt] of this.prompts) {
      if (!requestIds.has(id) && (prompt.state === "pending" || prompt.state === "sent")) {
        prompt.resolve("closed");
      }
    }
  }

  get pending() {
    return [...this.prompts.values()].some((p) => p.state === "pending");
  }
}
