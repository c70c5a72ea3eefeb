// A tool call waiting for the user's approval: what it would do (the diff an edit would make,
// the command), why it asks, and the answers: allow once, allow always (when offered), or deny
// with an optional reason the agent reads. The card closes on approval_resolved.
// Everything the agent wrote is shown as text (textContent), never as HTML.

import { firstSeen, timeLeft } from "./clarify.js";
import { renderDiff } from "./diff.js";
import { visible } from "./visible.js";

const OUTCOMES = {
  timed_out: "Timed out: not run",
  cancelled: "Cancelled",
  server_restarted: "The server restarted: not run",
  closed: "Closed while this page was away",
};

const DECIDED = {
  allow_once: "Allowed once",
  allow_always: "Allowed always",
  deny: "Denied",
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = visible(text);
  return node;
}

// A unified diff (an edit's preview) is coloured line by line; anything else is plain text.
function looksLikeDiff(text) {
  return /^(--- |\+\+\+ |@@ )/m.test(text);
}

function titleOf({ title, tool, effect, agentId }) {
  if (typeof title === "string" && title) return title;
  const verb = { reads: "read", writes: "edit", runs: "run" }[effect] ?? "run";
  return `${agentId ? `sub-agent ${agentId}: ` : ""}allow ${tool} to ${verb}?`;
}

export class ApprovalCards {
  // `answer(requestId, choice, reason)` sends the answer; it returns false when not connected.
  constructor(addItem, answer) {
    this.addItem = addItem;
    this.answer = answer;
    this.timeoutSeconds = 300; // the server's clarifyTimeout replaces it
    this.cards = new Map();
  }

  // Show a request (again, after a reconnect: an existing card is kept, not duplicated).
  ask(request) {
    const { requestId } = request;
    const known = this.cards.get(requestId);
    if (known) {
      if (known.state === "sent") known.setState("pending"); // the answer did not arrive
      return known;
    }
    const choices = Array.isArray(request.choices) ? request.choices : ["allow_once", "deny"];
    const always = Array.isArray(request.always) ? request.always.map(String) : [];
    const preview = String(request.preview ?? "");

    const box = el("section", "approval");
    box.dataset.requestId = requestId;
    box.dataset.state = "pending";
    box.dataset.tool = String(request.tool ?? "");
    box.setAttribute("aria-label", "Approval needed");
    box.append(el("h3", "approval-heading", "Approval needed"));
    box.append(el("p", "approval-title", titleOf(request)));
    const shown = looksLikeDiff(preview) ? renderDiff(preview) : el("pre", "", preview);
    shown.classList.add("approval-preview");
    box.append(shown);
    if (request.reason) box.append(el("p", "approval-reason", String(request.reason)));
    if (always.length && choices.includes("allow_always")) {
      box.append(el("p", "approval-always", `“Allow always” keeps: ${always.join(", ")}`));
    }

    const form = el("form", "approval-answer");
    const reason = el("input", "approval-deny-reason");
    reason.type = "text";
    reason.placeholder = "Reason, if you deny (the agent reads it)";
    reason.setAttribute("aria-label", "Reason for denying");
    const buttons = el("div", "approval-buttons");
    const button = (choice, label, className) => {
      const node = el("button", className, label);
      node.type = choice === "deny" ? "submit" : "button";
      node.dataset.choice = choice;
      if (choice !== "deny") node.addEventListener("click", () => card.send(choice));
      buttons.append(node);
      return node;
    };
    const first = button("allow_once", "Allow once", "allow-once");
    if (choices.includes("allow_always")) button("allow_always", "Allow always", "allow-always ghost");
    button("deny", "Deny", "deny danger");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      card.send("deny");
    });
    form.append(reason, buttons);
    const countdown = el("p", "approval-countdown");
    const sent = el("p", "approval-sent");
    sent.hidden = true;
    const outcome = el("p", "approval-outcome");
    outcome.hidden = true;
    box.append(form, countdown, sent, outcome);

    const deadline = firstSeen(requestId) + this.timeoutSeconds * 1000;
    const card = {
      state: "pending",
      box,
      said: "", // the reason this tab sent with its denial
      setState: (state) => {
        card.state = state;
        box.dataset.state = state;
        const open = state === "pending";
        for (const control of box.querySelectorAll("button, input")) control.disabled = !open;
      },
      send: (choice) => {
        if (card.state !== "pending") return;
        const why = choice === "deny" ? reason.value.trim() : "";
        if (!this.answer(requestId, choice, why)) return;
        card.said = why;
        sent.textContent = `You answered: ${DECIDED[choice] ?? choice}${why ? ` (${why})` : ""}`;
        sent.hidden = false;
        card.setState("sent");
      },
      tick: () => {
        if (card.state !== "pending" && card.state !== "sent") return;
        const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
        countdown.textContent = timeLeft(left);
        countdown.classList.toggle("urgent", left <= 5);
      },
      resolve: (how, choice) => {
        clearInterval(timer);
        sessionStorage.removeItem(`neta.asked.${requestId}`);
        card.setState(how === "answered" ? (choice === "deny" ? "denied" : "allowed") : how);
        countdown.hidden = true;
        if (how === "answered") {
          sent.hidden = true; // the outcome says it
          const why = choice === "deny" && card.said ? ` (${card.said})` : "";
          outcome.textContent = `${DECIDED[choice] ?? "Answered"}${why}`;
        } else {
          outcome.textContent = OUTCOMES[how] ?? how;
        }
        outcome.hidden = false;
      },
      refuse: (message) => {
        outcome.textContent = message;
        outcome.hidden = false;
      },
    };
    const timer = setInterval(card.tick, 250);
    card.stop = () => clearInterval(timer);
    card.tick();
    this.cards.set(requestId, card);
    this.addItem(box);
    first.focus({ preventScroll: true });
    return card;
  }

  // Forget every card (the conversation is rebuilt from the history).
  reset() {
    for (const card of this.cards.values()) card.stop();
    this.cards.clear();
  }

  resolved(requestId, how, choice) {
    this.cards.get(requestId)?.resolve(how, choice);
  }

  // An answer the server refused (e.g. expired): say so on the newest unsettled card.
  refused(message) {
    const open = [...this.cards.values()].filter((c) => c.state === "sent" || c.state === "pending");
    const card = open.pop();
    if (!card) return false;
    card.refuse(message);
    return true;
  }

  // Requests the server no longer holds as pending (after a reconnect) are over.
  keepOnly(requestIds) {
    for (const [id, card] of this.cards) {
      if (!requestIds.has(id) && (card.state === "pending" || card.state === "sent")) {
        card.resolve("closed");
      }
    }
  }

  get pending() {
    return [...this.cards.values()].some((c) => c.state === "pending");
  }
}
