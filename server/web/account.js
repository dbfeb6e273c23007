// Accounts on the page: log in, sign up, change the password and log out
// (#/account), a player's profile (#/player/NAME: ratings, their history
// drawn here as SVG, latest games, tournaments) and a game's leaderboard
// (#/leaderboard/GAME). The account messages are the protocol's
// (docs/protocol.md, accounts and tokens); the profile and leaderboard are
// read from the HTTP API (docs/http.md).

import { api, store } from "./net.js";
import { h, clear } from "./dom.js";
import { GAMES, gameName } from "./words.js";

// A player's kind beside the name: accounts of bots and guests are marked
// (a guest's name proves nothing); people's accounts are plain.
export const kindTag = (kind) => kind === "bot" || kind === "guest"
  ? h("span", { class: `tag kind-${kind}`, title: kind === "bot" ? "a bot's account" : "a guest: no account" }, kind)
  : "";

/// A player's name as shown everywhere: an account's links to its profile,
/// with its kind's badge; a guest's is plain text, marked.
export function playerName(name, kind) {
  if (!name) return h("em", {}, "free");
  const account = kind === "person" || kind === "bot";
  return h("span", { class: "player-name" },
    account ? h("a", { href: `#/player/${encodeURIComponent(name)}`, class: "plink" }, name) : name,
    kindTag(kind));
}

function errorLine(id) {
  const el = h("p", { class: "error", role: "alert", id });
  el.show = (e) => { el.textContent = e ? (e.message || String(e)) : ""; };
  return el;
}

function field(id, label, attrs) {
  return h("label", { class: "field", for: id }, h("span", {}, label), h("input", { id, name: id, required: true, ...attrs }));
}

const value = (form, id) => form.querySelector(`#${id}`).value;

// The token a login gives is named for this page in the account's list of
// tokens; it has every scope and the server's default life.
async function logIn(conn, username, password) {
  const answer = await conn.send({ type: "login", username, password, name: "web page" });
  store.setSession({ token: answer.token, username: answer.account.username, kind: answer.account.kind });
  await conn.again();
}

/// Logs out: the server revokes the token this page said hello with, then
/// the page forgets it and carries on as a guest. If the server cannot be
/// told, the token is kept (it would still work), and the refusal shown.
async function logOut(conn) {
  const session = store.session();
  try {
    await conn.send({ type: "revoke_token" });
  } catch (e) {
    // Revoked already (another page logged out, or the password changed).
    if (e.code !== "unauthorized") throw e;
  }
  store.forgetSession(session && session.token);
  await conn.again();
}

// ---- #/account ----

export function accountView(conn) {
  const el = h("section", { class: "account" });
  const render = (account) => clear(el, account ? signedIn(account) : signedOut());

  const signedOut = () => {
    const loginError = errorLine("login-error");
    const signupError = errorLine("signup-error");
    const login = h("form", { id: "login", class: "stack", onsubmit: async (e) => {
      e.preventDefault();
      loginError.show(null);
      try { await logIn(conn, value(login, "login-name").trim(), value(login, "login-password")); } catch (err) { loginError.show(err); }
    } },
    field("login-name", "Username", { autocomplete: "username", maxlength: 64 }),
    field("login-password", "Password", { type: "password", autocomplete: "current-password", maxlength: 1024 }),
    h("button", { type: "submit", class: "primary" }, "Log in"), loginError);
    const kind = h("select", { id: "signup-kind", "aria-label": "kind" },
      h("option", { value: "person", selected: true }, "a person"), h("option", { value: "bot" }, "a bot (marked BOT wherever it plays)"));
    const signup = h("form", { id: "signup", class: "stack", onsubmit: async (e) => {
      e.preventDefault();
      signupError.show(null);
      const username = value(signup, "signup-name").trim();
      const password = value(signup, "signup-password");
      if (password !== value(signup, "signup-again")) return signupError.show("the two passwords differ: type the same one twice");
      try {
        await conn.send({ type: "create_account", username, password, kind: kind.value });
        await logIn(conn, username, password);
      } catch (err) { signupError.show(err); }
    } },
    field("signup-name", "Username", { autocomplete: "username", maxlength: 64 }),
    h("p", { class: "muted small" }, "2 to 24 letters, digits, _ and -, beginning and ending with a letter or digit."),
    field("signup-password", "Password", { type: "password", autocomplete: "new-password", maxlength: 1024 }),
    field("signup-again", "Password again", { type: "password", autocomplete: "new-password", maxlength: 1024 }),
    h("p", { class: "muted small" }, "8 to 128 characters."),
    h("label", { class: "field" }, h("span", {}, "Plays as"), kind),
    h("button", { type: "submit", class: "primary" }, "Sign up"), signupError);
    return [h("h2", {}, "Your account"),
      h("p", { class: "muted" }, "Guests play casual games under any free name. An account keeps its name, plays rated tournaments and has a rating per game."),
      h("div", { class: "panels" },
        h("div", { class: "panel" }, h("h3", {}, "Log in"), login),
        h("div", { class: "panel" }, h("h3", {}, "Sign up"), signup))];
  };

  const signedIn = (account) => {
    const passwordError = errorLine("password-error");
    const done = h("p", { class: "done", role: "status", id: "password-done" });
    const change = h("form", { id: "change-password", class: "stack", onsubmit: async (e) => {
      e.preventDefault();
      passwordError.show(null);
      done.textContent = "";
      const password = value(change, "current-password");
      const newPassword = value(change, "new-password");
      try {
        const answer = await conn.send({ type: "change_password", password, new_password: newPassword });
        // The connection carries on with the new token; every other token
        // of the account, this page's old one too, is revoked.
        const session = store.session();
        store.setSession({ ...session, token: answer.token });
        change.reset();
        done.textContent = "Password changed. Every other session of the account was logged out.";
      } catch (err) { passwordError.show(err); }
    } },
    field("current-password", "Current password", { type: "password", autocomplete: "current-password", maxlength: 1024 }),
    field("new-password", "New password", { type: "password", autocomplete: "new-password", maxlength: 1024 }),
    h("button", { type: "submit" }, "Change password"), passwordError, done);
    const logoutError = errorLine("logout-error");
    return [h("h2", {}, "Your account"),
      h("p", {}, "Logged in as ", playerName(account.username, account.kind), "."),
      h("p", {}, h("a", { href: `#/player/${encodeURIComponent(account.username)}` }, "Your profile: ratings, games, tournaments")),
      h("div", { class: "panels" },
        h("div", { class: "panel" }, h("h3", {}, "Change password"), change),
        h("div", { class: "panel" }, h("h3", {}, "Log out"),
          h("p", { class: "muted small" }, "This browser keeps your session until you log out. Logging out ends it on the server too."),
          h("button", { type: "button", id: "logout", class: "danger", onclick: async () => {
            logoutError.show(null);
            try { await logOut(conn); } catch (err) { logoutError.show(err); }
          } }, "Log out"), logoutError))];
  };

  const stop = conn.onAccount(render);
  return { el, dispose: stop };
}

// ---- #/player/NAME ----

const when = (ms) => (ms ? new Date(ms).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "");

export function profileView(name) {
  const el = h("section", { class: "profile" }, h("p", {}, "Loading…"));
  const problem = errorLine("profile-error");
  (async () => {
    let p;
    try {
      p = await api(`/api/players/${encodeURIComponent(name)}`);
    } catch (e) {
      problem.show(e);
      clear(el, h("h2", {}, name), problem,
        e.code === "unknown_player" ? h("p", { class: "muted" }, "Guests have no profile: only accounts do.") : "");
      return;
    }
    const a = p.account;
    clear(el,
      h("h2", { id: "profile-name" }, a.username, " ", kindTag(a.kind)),
      h("p", { class: "muted" }, `${a.kind === "bot" ? "A bot's account" : "An account"} since ${new Date(a.created_at_ms).toLocaleDateString()}.`),
      h("h3", {}, "Ratings"),
      p.ratings.length
        ? h("table", { class: "games ratings", id: "profile-ratings" },
          h("thead", {}, h("tr", {}, ["Game", "Rating", "±", "Games"].map((t) => h("th", {}, t)))),
          h("tbody", {}, p.ratings.map((r) => h("tr", { dataset: { game: r.game } },
            h("td", {}, h("a", { href: `#/leaderboard/${r.game}` }, r.name)),
            h("td", {}, Math.round(r.rating)), h("td", {}, Math.round(r.deviation)), h("td", {}, r.games)))))
        : h("p", { class: "muted" }, "No rated game yet: ratings come from rated tournaments."),
      p.history.map((g) => h("figure", { class: "rating-graph", dataset: { game: g.game } },
        h("figcaption", {}, `${g.name}: rating after each rated round`), ratingGraph(g.points))),
      h("h3", {}, "Latest games"),
      p.games.length
        ? h("table", { class: "games", id: "profile-games" }, h("tbody", {}, p.games.map((g) => h("tr", {},
          h("td", {}, g.name),
          h("td", {}, "vs ", playerName(g.opponent, g.opponent_kind)),
          h("td", { class: g.won == null ? "muted" : g.won ? "won" : "lost" }, g.won == null ? g.result.reason : g.won ? "won" : "lost"),
          h("td", { class: "muted small" }, when(g.finished_at_ms)),
          h("td", {}, h("a", { href: `#/replay/${g.room}`, class: "replay-link" }, "replay"))))))
        : h("p", { class: "muted" }, "No finished game yet."),
      h("h3", {}, "Tournaments"),
      p.tournaments.length
        ? h("table", { class: "games", id: "profile-tournaments" }, h("tbody", {}, p.tournaments.map((t) => h("tr", {},
          h("td", {}, h("a", { href: `#/tournament/${t.tournament}` }, t.name || t.code)),
          h("td", {}, t.game_name, t.rated ? h("span", { class: "tag", title: "its games move ratings" }, "rated") : ""),
          h("td", { class: "muted small" }, t.finished_at_ms ? `finished ${when(t.finished_at_ms)}` : "registering or running")))))
        : h("p", { class: "muted" }, "No tournament yet."));
  })();
  return { el };
}

/// A rating's history as a line: one point per rated round, oldest left,
/// the rating's range up the side. Drawn here, no library, about as wide in
/// its own units as it will be in pixels, so that its words keep their size
/// on a phone and on a desktop.
export function ratingGraph(points) {
  const W = Math.round(Math.max(260, Math.min(720, window.innerWidth - 64)));
  const [H, left, right, top, bottom] = [170, 44, 10, 10, 22];
  const ratings = points.map((p) => p.rating);
  let lo = Math.min(...ratings, 1500) - 20;
  let hi = Math.max(...ratings, 1500) + 20;
  lo = Math.floor(lo / 10) * 10;
  hi = Math.ceil(hi / 10) * 10;
  const x = (i) => left + (points.length === 1 ? (W - left - right) / 2 : (i * (W - left - right)) / (points.length - 1));
  const y = (r) => top + ((hi - r) * (H - top - bottom)) / (hi - lo);
  const line = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ");
  return h("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "graph", role: "img",
    "aria-label": `rating from ${Math.round(ratings[0])} to ${Math.round(ratings[ratings.length - 1])} over ${points.length} rounds` },
  h("line", { x1: left, x2: W - right, y1: y(1500), y2: y(1500), class: "base" }),
  h("text", { x: left - 6, y: y(hi) + 4, class: "axis", "text-anchor": "end" }, hi),
  h("text", { x: left - 6, y: y(lo) + 4, class: "axis", "text-anchor": "end" }, lo),
  h("text", { x: left - 6, y: y(1500) + 4, class: "axis", "text-anchor": "end" }, 1500),
  h("text", { x: left, y: H - 5, class: "axis" }, new Date(points[0].at_ms).toLocaleDateString()),
  h("text", { x: W - right, y: H - 5, class: "axis", "text-anchor": "end" }, new Date(points[points.length - 1].at_ms).toLocaleDateString()),
  h("path", { d: line, class: "line" }),
  points.map((p, i) => h("circle", { cx: x(i), cy: y(p.rating), r: 4, class: "point" },
    h("title", {}, `${Math.round(p.rating)} after round ${p.round} of ${p.code} (${when(p.at_ms)})`))));
}

// ---- #/leaderboard/GAME ----

export function leaderboardView(game) {
  const id = GAMES.some(([g]) => g === game) ? game : "nim";
  const pick = h("select", { id: "leaderboard-game", "aria-label": "game",
    onchange: () => { location.hash = `#/leaderboard/${pick.value}`; } },
  GAMES.map(([g, n]) => h("option", { value: g, selected: g === id || null }, n)));
  const rows = h("tbody", {}, h("tr", {}, h("td", { colspan: 5, class: "muted" }, "Loading…")));
  const problem = errorLine("leaderboard-error");
  (async () => {
    try {
      const board = await api(`/api/ratings?game=${encodeURIComponent(id)}&limit=100`);
      clear(rows, board.ratings.length ? board.ratings.map((r, i) => h("tr", {},
        h("td", {}, i + 1),
        h("td", {}, r.unclaimed ? h("span", { title: "recorded under a plain name, before accounts" }, r.player, " ", h("em", { class: "muted small" }, "(unclaimed)")) : playerName(r.player, r.player_kind)),
        h("td", {}, Math.round(r.rating)), h("td", {}, Math.round(r.deviation)), h("td", {}, r.games)))
        : h("tr", {}, h("td", { colspan: 5, class: "muted" }, `No rated ${gameName(id)} game yet: ratings come from rated tournaments.`)));
    } catch (e) { problem.show(e); }
  })();
  return {
    el: h("section", { class: "leaderboard" }, h("h2", {}, "Leaderboard"),
      h("label", { class: "row" }, "Game ", pick), problem,
      h("table", { class: "standings", id: "leaderboard" },
        h("thead", {}, h("tr", {}, ["#", "Player", "Rating", "±", "Games"].map((t) => h("th", {}, t)))), rows)),
  };
}
