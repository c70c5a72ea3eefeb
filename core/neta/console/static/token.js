// The server's token: asked for once, kept in sessionStorage (this tab only), sent in the
// Authorization header (REST) or a WebSocket subprotocol, never in a URL and never logged.

const KEY = "neta.console.token";

export function savedToken() {
  return sessionStorage.getItem(KEY);
}

export function forgetToken() {
  sessionStorage.removeItem(KEY);
}

// The subprotocols that carry `token` to /ws (see neta.console.browser_token).
export function tokenProtocols(token, prefix) {
  if (!token) return [];
  const bytes = new TextEncoder().encode(token);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  const encoded = btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return ["neta", prefix + encoded];
}

export function authHeaders(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// Whether the server accepts `token`: a REST read of a session that cannot exist answers
// 401 for a wrong token and 404 for a good one. Rejects when the server cannot be reached.
export async function accepted(token) {
  const response = await fetch("/v1/sessions/-", { headers: authHeaders(token), cache: "no-store" });
  return response.status !== 401 && response.status !== 403;
}

// Ask until the server accepts a token; resolves with it (saved for this tab).
export function askToken(message = "") {
  const dialog = document.getElementById("token-dialog");
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  const error = document.getElementById("token-error");
  error.textContent = message;
  error.hidden = !message;
  input.value = "";
  return new Promise((resolve) => {
    const refuseEscape = (event) => event.preventDefault();
    const submit = async (event) => {
      event.preventDefault();
      const token = input.value;
      if (!token) return;
      let ok = false;
      try {
        ok = await accepted(token);
      } catch {
        error.textContent = "The server cannot be reached.";
        error.hidden = false;
        return;
      }
      if (!ok) {
        error.textContent = "The server refused this token.";
        error.hidden = false;
        input.select();
        return;
      }
      sessionStorage.setItem(KEY, token);
      input.value = "";
      form.removeEventListener("submit", submit);
      dialog.removeEventListener("cancel", refuseEscape);
      dialog.close();
      resolve(token);
    };
    form.addEventListener("submit", submit);
    dialog.addEventListener("cancel", refuseEscape);
    if (!dialog.open) dialog.showModal();
    input.focus();
  });
}
