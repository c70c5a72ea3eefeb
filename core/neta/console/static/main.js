// The console: wires the page to /ws (live frames) and /v1 (a session's history).

import { ApprovalCards } from "./approvals.js";
import { Chat } from "./chat.js";
import { ClarifyPrompts } from "./clarify.js";
import { Connection } from "./connection.js";
import { forgetSession, rememberSession, showSessions } from "./sessions.js";
import { TodoPanel } from "./todos.js";
import { accepted, askToken, authHeaders, forgetToken, savedToken, tokenProtocols } from "./token.js";

const $ = (id) => document.getElementById(id);

const chat = new Chat($("messages"));
const todos = new TodoPanel($("todos"), $("todo-counts"), $("todo-empty"));
const prompts = new ClarifyPrompts(
  (node) => chat.add(node, "item-clarify", { reveal: true }),
  (requestId, answer) => {
    lastAnswer = prompts;
    return connection.send("clarify_response", { requestId, answer });
  },
);
const approvals = new ApprovalCards(
  (node) => chat.add(node, "item-approval", { reveal: true }),
  (requestId, choice, reason) => {
    lastAnswer = approvals;
    return connection.send("approval_response", { requestId, choice, reason });
  },
);
const input = $("input");
const status = $("status");

let config = { tokenRequired: false, clarifyTimeout: 300, tokenProtocol: "neta.bearer." };
let token = null;
let sessionId = new URLSearchParams(location.search).get("sessionId");
let running = false;
let ready = false; // history shown; frames that arrive before wait in `waiting`
let waiting = [];
let lastSent = "";
let lastAnswer = null; // the prompts or the approval cards: which answered last

const connection = new Connection({
  onFrame: (frame) => {
    // Until the history is shown, events wait; an error may come instead of session_ready.
    if (ready || frame.type === "session_ready" || frame.type === "error") handle(frame);
    else waiting.push(frame);
  },
  onState: (state) => {
    status.dataset.state = state;
    status.textContent = state;
    if (state !== "connected") ready = false;
    updateControls();
  },
  onRefused: () => {
    if (!config.tokenRequired) return false;
    // Refused for the token, or the server is down? Only a 401 means the token.
    accepted(token)
      .catch(() => true)
      .then(async (good) => {
        if (good) return connection.retryLater();
        forgetToken();
        token = await askToken("The server refused this token.");
        start();
      });
    return true;
  },
});

function setRunning(value) {
  running = value;
  updateControls();
}

function updateControls() {
  const live = connection.open && ready;
  input.disabled = !live;
  $("send").disabled = !live || running;
  $("stop").hidden = !running;
  $("stop").disabled = !live;
  document.body.dataset.running = running ? "yes" : "no";
}

function setSession(id) {
  sessionId = id;
  const url = new URL(location.href);
  url.searchParams.set("sessionId", id);
  history.replaceState(null, "", url);
  rememberSession(id);
  showSessions($("sessions"), id);
}

async function loadHistory(id) {
  const response = await fetch(`/v1/sessions/${encodeURIComponent(id)}`, {
    headers: authHeaders(token),
    cache: "no-store",
  });
  if (!response.ok) throw new Error(`the session could not be read (HTTP ${response.status})`);
  return response.json();
}

async function onReady(data, attached) {
  setSession(data.sessionId);
  if (attached) {
    try {
      const view = await loadHistory(data.sessionId);
      chat.history(view.messages ?? []);
      todos.show(view.todos ?? []);
      setRunning(Boolean(view.running));
    } catch (error) {
      chat.notice(String(error.message ?? error), "error");
    }
  }
  const pending = Array.isArray(data.pendingClarify) ? data.pendingClarify : [];
  prompts.keepOnly(new Set(pending.map((q) => q.requestId)));
  for (const question of pending) prompts.ask(question);
  const asked = Array.isArray(data.pendingApprovals) ? data.pendingApprovals : [];
  approvals.keepOnly(new Set(asked.map((a) => a.requestId)));
  for (const request of asked) {
    chat.cards.waiting(request.callId, request.agentId);
    approvals.ask(request);
  }
  ready = true;
  const queued = waiting;
  waiting = [];
  queued.forEach(handle);
  updateControls();
  if (!prompts.pending && !approvals.pending) input.focus();
}

function handle(frame) {
  const data = frame.data ?? {};
  const main = data.agent_id == null; // not a crew sub-agent's event
  switch (frame.type) {
    case "session_ready": {
      const attached = Boolean(sessionId);
      if (attached) {
        prompts.reset(); // the conversation is rebuilt from the history
        approvals.reset();
      }
      onReady(data, attached);
      break;
    }
    case "run_started":
      if (main) {
        if (data.message) chat.user(String(data.message)); // none: a run resumed by approvals
        setRunning(true);
      }
      break;
    case "text_delta":
      if (main) chat.delta(String(data.text ?? ""));
      break;
    case "tool_call_start":
      chat.endReply();
      if (data.name !== "clarify") chat.cards.start(data.call_id, data.name, data.arguments, data.agent_id);
      break;
    case "tool_result":
      if (data.name !== "clarify") {
        const content = String(data.content ?? "");
        chat.cards.finish(data.call_id, data.name, content, Boolean(data.is_error), data.duration_ms, data.agent_id);
      }
      break;
    case "todo_update":
      if (main) todos.show(data.todos);
      break;
    case "clarify_request":
      chat.endReply();
      prompts.ask(data);
      break;
    case "clarify_resolved":
      prompts.resolved(data.requestId, data.outcome);
      break;
    case "approval_request":
      chat.endReply();
      chat.cards.waiting(data.callId, data.agentId ?? data.agent_id);
      approvals.ask(data);
      break;
    case "approval_resolved":
      approvals.resolved(data.requestId, data.outcome, data.choice);
      break;
    case "run_finished":
      if (!main) break;
      if (!chat.endReply() && data.text) chat.assistant(String(data.text));
      if (data.outcome !== "completed") {
        const kind = data.outcome === "error" ? "error" : "info";
        chat.notice(`Run ended (${data.outcome})${data.reason ? `: ${data.reason}` : ""}`, kind);
      }
      setRunning(false);
      break;
    case "error":
      onError(String(data.code ?? ""), String(data.message ?? ""));
      break;
    default:
      break;
  }
}

const ANSWER_ERRORS = new Set(["expired", "already_resolved", "unknown_request", "invalid_answer", "forbidden"]);

function onError(code, message) {
  if (code === "unknown_session" || code === "session_deleted") {
    if (sessionId) forgetSession(sessionId);
    chat.notice(`Session ${sessionId ?? ""} is gone (${message}); a new one starts.`, "error");
    connection.close();
    sessionId = null;
    history.replaceState(null, "", location.pathname);
    start();
    return;
  }
  if (code === "busy" && lastSent && !input.value) input.value = lastSent;
  if (ANSWER_ERRORS.has(code) && lastAnswer?.refused(`Not accepted: ${message}`)) return;
  chat.notice(`${code}: ${message}`, "error");
}

function send() {
  const text = input.value;
  if (!text.trim() || running) return;
  if (!connection.send("user_message", { text })) {
    chat.notice("Not connected: the message was not sent.", "error");
    return;
  }
  lastSent = text;
  input.value = "";
  rememberSession(sessionId, text.trim().slice(0, 60));
  showSessions($("sessions"), sessionId);
}

function stop() {
  if (running) connection.send("cancel_run");
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  send();
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && running && !$("token-dialog").open) {
    event.preventDefault();
    stop();
  }
});
$("stop").addEventListener("click", stop);
$("new-session").addEventListener("click", () => location.assign(location.pathname));

function start() {
  ready = false;
  waiting = [];
  connection.connect(sessionId, tokenProtocols(token, config.tokenProtocol));
  if (token) showHost(); // the model and workspace are told to the token's holder only
}

async function readConfig(headers = {}) {
  try {
    const response = await fetch("/console/config.json", { headers, cache: "no-store" });
    if (response.ok) return await response.json();
  } catch {
    // the defaults do; the connection reports what is wrong
  }
  return {};
}

// The header's model and workspace (its folder's name; the full path as the tooltip).
function showHost(given = null) {
  const shown = given ? Promise.resolve(given) : readConfig(authHeaders(token));
  shown.then((host) => {
    $("host-model").textContent = String(host.model ?? "");
    const workspace = $("host-workspace");
    workspace.textContent = String(host.workspace ?? "");
    workspace.title = String(host.workspacePath ?? host.workspace ?? "");
  });
}

async function boot() {
  showSessions($("sessions"), sessionId);
  config = { ...config, ...(await readConfig()) };
  if (!config.tokenRequired) showHost(config);
  prompts.timeoutSeconds = Number(config.clarifyTimeout) || 300;
  approvals.timeoutSeconds = prompts.timeoutSeconds;
  if (config.tokenRequired) {
    token = savedToken();
    if (!token) {
      status.dataset.state = "locked";
      status.textContent = "token needed";
      token = await askToken();
    }
  }
  start();
}

boot();
