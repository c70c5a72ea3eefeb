// The WebSocket to /ws: reattaches to the session after a drop, with a growing delay.

export class Connection {
  // handlers: onFrame(frame), onState(state), onRefused(): the socket closed before it opened;
  // true when the handler deals with it (otherwise the connection is retried).
  constructor(handlers) {
    this.handlers = handlers;
    this.ws = null;
    this.sessionId = null;
    this.protocols = [];
    this.retries = 0;
    this.timer = null;
    this.stopped = false;
  }

  get open() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  connect(sessionId, protocols) {
    this.sessionId = sessionId;
    this.protocols = protocols;
    this.stopped = false;
    clearTimeout(this.timer);
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = sessionId ? `?sessionId=${encodeURIComponent(sessionId)}` : "";
    const ws = this.protocols.length
      ? new WebSocket(`${scheme}//${location.host}/ws${query}`, this.protocols)
      : new WebSocket(`${scheme}//${location.host}/ws${query}`);
    let opened = false;
    this.ws = ws;
    this.handlers.onState(this.retries ? "reconnecting" : "connecting");
    ws.addEventListener("open", () => {
      opened = true;
      this.retries = 0;
      this.handlers.onState("connected");
    });
    ws.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame && typeof frame.type === "string") this.handlers.onFrame(frame);
    });
    ws.addEventListener("close", () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      this.handlers.onState("disconnected");
      if (!opened && this.handlers.onRefused()) return;
      this.retryLater();
    });
  }

  // Connect again after a delay that grows with each failure (up to 10 s).
  retryLater() {
    clearTimeout(this.timer);
    const delay = Math.min(10000, 500 * 2 ** this.retries);
    this.retries += 1;
    this.timer = setTimeout(() => this.connect(this.sessionId, this.protocols), delay);
  }

  // Stop reconnecting and close the socket.
  close() {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
  }

  send(type, data = {}) {
    if (!this.open) return false;
    this.ws.send(JSON.stringify({ type, sessionId: this.sessionId, data }));
    return true;
  }
}
