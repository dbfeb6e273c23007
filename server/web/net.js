// The page's one WebSocket to the server (protocol v1, docs/protocol.md):
// requests answered by id, events handed to whoever listens, and a reconnect
// with backoff that says `hello` again and lets every view resume.

export class Connection {
  constructor(name) {
    this.name = name;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject}
    this.listeners = new Set(); // fn(msg) for unsolicited messages
    this.statusListeners = new Set();
    this.reconnectHooks = new Set(); // async fn() after each new hello
    this.backoff = 500;
    this.ready = null;
    this.closedByPage = false;
    this.open();
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/`;
  }

  open() {
    this.status("connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.ready = new Promise((resolve) => {
      ws.onopen = async () => {
        try {
          const refused = await this.hello();
          this.backoff = 500;
          this.status("connected", refused);
          resolve();
          // The views subscribe by themselves the first time.
          const again = this.opened;
          this.opened = true;
          if (!again) return;
          for (const hook of this.reconnectHooks) {
            try { await hook(); } catch (e) { console.warn("resume failed", e); }
          }
        } catch (e) {
          this.status("refused", e.message);
        }
      };
    });
    ws.onmessage = (m) => this.receive(m.data);
    ws.onclose = (e) => {
      for (const { reject } of this.pending.values()) {
        reject(new ServerError("disconnected", "the connection to the server was lost"));
      }
      this.pending.clear();
      if (this.closedByPage) return;
      const why = e.reason ? `${e.reason}` : "connection lost";
      this.status("disconnected", why);
      const wait = this.backoff;
      this.backoff = Math.min(this.backoff * 2, 10000);
      setTimeout(() => this.open(), wait);
    };
  }

  status(state, detail) {
    this.state = state;
    for (const fn of this.statusListeners) fn(state, detail);
  }

  /// Calls `fn(state, detail)` on every change: connecting, connected,
  /// disconnected (with why), refused.
  onStatus(fn) {
    this.statusListeners.add(fn);
    if (this.state) fn(this.state);
    return () => this.statusListeners.delete(fn);
  }

  receive(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.id != null && this.pending.has(msg.id)) {
      const { resolve, reject } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.type === "error") reject(new ServerError(msg.code, msg.message));
      else resolve(msg);
      return;
    }
    if (msg.type === "shutdown") this.status("disconnected", msg.message);
    for (const fn of this.listeners) fn(msg);
  }

  /// Sends a request and resolves with its answer (rejects with a
  /// ServerError carrying the server's code and words).
  async send(msg, handshake = false) {
    if (!handshake) await this.ready;
    if (this.ws.readyState !== WebSocket.OPEN) {
      throw new ServerError("disconnected", "not connected to the server; retrying");
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ ...msg, id }));
    });
  }

  listen(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  onReconnect(fn) {
    this.reconnectHooks.add(fn);
    return () => this.reconnectHooks.delete(fn);
  }

  // Says hello as the account this browser is logged in to (its kept
  // token), or under the chosen name. A kept token the server refuses
  // (revoked by a log out elsewhere, a password changed on another page,
  // expired) is forgotten, and the page goes on as a guest; a name the
  // server refuses (an account's, or a bad one) gives way to one the server
  // gives. The refusal's message comes back, to be shown.
  async hello(urgent = true) {
    const session = store.session();
    if (session) {
      try {
        const welcome = await this.send({ type: "hello", version: 1, token: session.token }, urgent);
        this.given = welcome.name;
        this.account = welcome.account;
        this.tellAccount();
        return undefined;
      } catch (e) {
        if (e.code !== "unauthorized") throw e;
        store.forgetSession(session.token);
        const refused = await this.hello(urgent);
        return `logged out (${e.message}): log in again${refused ? `; ${refused}` : ""}`;
      }
    }
    this.account = null;
    this.tellAccount();
    try {
      const welcome = await this.send({ type: "hello", version: 1, name: this.name || undefined }, urgent);
      this.given = welcome.name;
      return undefined;
    } catch (e) {
      if (!this.name || !["name_taken", "bad_request"].includes(e.code)) throw e;
      const welcome = await this.send({ type: "hello", version: 1 }, urgent);
      this.given = welcome.name;
      return `${e.message}; playing as ${welcome.name}`;
    }
  }

  /// Calls `fn(account)` now and whenever the connection's account changes
  /// (null: a guest).
  onAccount(fn) {
    this.accountListeners = this.accountListeners || new Set();
    this.accountListeners.add(fn);
    fn(this.account || null);
    return () => this.accountListeners.delete(fn);
  }

  tellAccount() {
    for (const fn of this.accountListeners || []) fn(this.account || null);
  }

  /// Says hello again as whoever the kept session now says (after a log in,
  /// a sign up or a log out); resolves once the server has answered.
  async again() {
    const refused = await this.hello(false);
    this.status("connected", refused);
    return refused;
  }

  rename(name) {
    this.name = name;
    if (this.state === "connected") {
      this.hello(false).then((refused) => this.status("connected", refused), () => {});
    }
  }
}

export class ServerError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/// GET a JSON endpoint of the HTTP API; a refusal throws its message.
export async function api(path) {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new ServerError(body.code || "http", body.message || response.statusText);
  return body;
}

// Positions and moves typed in the short forms of `grundy` (`nim 3 5 +
// kayles 7`, `1: 0 2`), read by the server with the engine's one reading
// (docs/http.md, /api/parse): the page parses none itself. A JSON spec or
// move is read there too.
export async function readPosition(text) {
  return (await api(`/api/parse?position=${encodeURIComponent(text)}`)).spec;
}

// A move typed at a room's position now (which no spec may describe).
export async function readMove(text, room) {
  const q = `room=${encodeURIComponent(room)}&move=${encodeURIComponent(text)}`;
  return (await api(`/api/parse?${q}`)).move;
}

// What this browser keeps, in its local storage (this origin's only, shared
// by its tabs, kept across restarts): the guest name, the secret tokens of
// its seats and tournament entries (so a reload or a reopened tab puts the
// person back), and the logged-in account's session: its username, kind and
// API token (docs/http.md, the web app, says why that is safe).
const KEY = "grundy";

function load() {
  try { return JSON.parse(localStorage.getItem(KEY)) || {}; } catch { return {}; }
}

function save(data) {
  try { localStorage.setItem(KEY, JSON.stringify(data)); } catch { /* private mode */ }
}

export const store = {
  name() { return load().name || ""; },
  /// The logged-in account: {token, username, kind}, or null.
  session() { const s = load().session; return s && s.token ? s : null; },
  setSession(session) { const d = load(); d.session = session; save(d); },
  /// Forgets the session (only if it is still `token`'s, when given: another
  /// tab may have logged in since).
  forgetSession(token) {
    const d = load();
    if (!d.session || (token && d.session.token !== token)) return;
    delete d.session;
    save(d);
  },
  setName(name) { const d = load(); d.name = name; save(d); },
  seat(room) { return (load().seats || {})[room] || null; },
  setSeat(room, seat) {
    const d = load();
    d.seats = d.seats || {};
    d.seats[room] = { ...seat, at: Date.now() };
    // Keep the newest 200 seats.
    const ids = Object.keys(d.seats).sort((a, b) => d.seats[b].at - d.seats[a].at);
    for (const id of ids.slice(200)) delete d.seats[id];
    save(d);
  },
  seatByCode(code) {
    const seats = load().seats || {};
    const hit = Object.entries(seats).find(([, s]) => s.code && s.code.toUpperCase() === code.toUpperCase());
    return hit ? { room: hit[0], ...hit[1] } : null;
  },
  entry(tournament) { return (load().entries || {})[tournament] || null; },
  setEntry(tournament, entry) {
    const d = load();
    d.entries = d.entries || {};
    d.entries[tournament] = { ...entry, at: Date.now() };
    save(d);
  },
};
