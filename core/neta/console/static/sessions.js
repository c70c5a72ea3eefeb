// The sessions this browser started, kept in localStorage (the server has no list of them).

const KEY = "neta.console.sessions";
const LIMIT = 50;

export function loadSessions() {
  try {
    const value = JSON.parse(localStorage.getItem(KEY) ?? "[]");
    return Array.isArray(value) ? value.filter((s) => s && typeof s.id === "string") : [];
  } catch {
    return [];
  }
}

function store(sessions) {
  localStorage.setItem(KEY, JSON.stringify(sessions.slice(0, LIMIT)));
}

// Note a session (most recent first); `title` is kept once set.
export function rememberSession(id, title = "") {
  const sessions = loadSessions();
  const known = sessions.find((s) => s.id === id);
  const entry = { id, title: known?.title || title, at: Date.now() };
  store([entry, ...sessions.filter((s) => s.id !== id)]);
}

export function forgetSession(id) {
  store(loadSessions().filter((s) => s.id !== id));
}

// Fill `list` with links to the sessions; the current one is marked.
export function showSessions(list, currentId) {
  const rows = loadSessions().map((session) => {
    const row = document.createElement("li");
    const link = document.createElement("a");
    link.href = `?sessionId=${encodeURIComponent(session.id)}`;
    link.textContent = session.title || "(no message yet)";
    link.title = session.id;
    if (session.id === currentId) link.setAttribute("aria-current", "page");
    const when = document.createElement("time");
    when.dateTime = new Date(session.at).toISOString();
    when.textContent = new Date(session.at).toLocaleString();
    row.append(link, when);
    return row;
  });
  if (!rows.length) {
    const empty = document.createElement("li");
    empty.className = "muted";
    empty.textContent = "None yet.";
    rows.push(empty);
  }
  list.replaceChildren(...rows);
}
