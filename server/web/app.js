// The Grundy web app: one more client of the documented protocol
// (docs/protocol.md) and of the HTTP API (docs/http.md). Views by the
// address's hash: the lobby (#/), a room to play or watch (#/room/ID),
// a replay with its review (#/replay/ID), tournaments (#/tournaments,
// #/tournament/ID), the analysis board (#/analyze), and (account.js) the
// account (#/account), a player's profile (#/player/NAME) and a game's
// leaderboard (#/leaderboard/GAME).

import { Connection, api, store, readPosition, readMove } from "./net.js";
import { h, clear } from "./dom.js";
import { accountView, profileView, leaderboardView, kindTag, playerName } from "./account.js";
import { board } from "./boards.js";
import {
  GAMES, specName, moveWords, typingHelp, formatClock, clockWords, resultWords,
} from "./words.js";

const app = document.getElementById("app");

function guestName() {
  const name = `guest-${Math.floor(Math.random() * 9000 + 1000)}`;
  store.setName(name);
  return name;
}

const conn = new Connection(store.name() || guestName());

// Tournaments this page plays in: their `your_game` messages come to any
// view, and a reconnect registers the connection again.
const playing = new Set();
async function rejoin(id) {
  const entry = store.entry(id);
  if (!entry || !entry.token) return null;
  playing.add(id);
  return conn.send({ type: "rejoin", tournament: id, token: entry.token });
}
// After a reconnect: asked again for a while while a cluster's node takes the
// tournament over (its node went away); in the background, so that the
// views resume meanwhile.
async function rejoinAgain(id, tries = 0) {
  try {
    await rejoin(id);
  } catch (e) {
    const passing = ["internal", "busy", "shutting_down", "unknown_tournament"].includes(e.code);
    if (!passing || tries >= 10) return;
    await new Promise((resolve) => setTimeout(resolve, 300 * (tries + 1)));
    return rejoinAgain(id, tries + 1);
  }
}
conn.onReconnect(async () => { for (const id of playing) rejoinAgain(id); });
const banner = h("p", { class: "banner", id: "banner", hidden: true });
conn.listen((msg) => {
  if (msg.type !== "your_game") return;
  store.setSeat(msg.room, { token: msg.token, seat: msg.seat, tournament: msg.tournament });
  // Straight to the game from any page but a game's: a person playing, or
  // reading the result of the game just over, follows the banner's link.
  if (current && current.busy) {
    clear(banner, h("a", { href: `#/room/${msg.room}` }, `Your game of round ${msg.round} against ${msg.opponent} is ready →`));
    banner.hidden = false;
  } else {
    location.hash = `#/room/${msg.room}`;
  }
});

// ---- the frame: navigation, the name, the connection's state ----

const status = h("span", { class: "status", id: "status" }, "connecting…");
conn.onStatus((state, detail) => {
  status.textContent = `${state}${detail ? `: ${detail}` : ""}`;
  status.className = `status ${state}`;
  status.dataset.state = state;
});
const nameInput = h("input", { id: "name", value: conn.name, maxlength: 40, "aria-label": "your name",
  onchange: () => { store.setName(nameInput.value.trim()); conn.rename(nameInput.value.trim()); } });
const view = h("div", { id: "view" });
// Who the page plays as: the logged-in account (its name, its badge, a link
// to its profile), or a guest's name to type and a way to log in.
const who = h("span", { class: "who", id: "who" });
conn.onAccount((account) => {
  if (account) {
    clear(who, h("a", { href: `#/player/${encodeURIComponent(account.username)}`, id: "account-name" }, account.username),
      kindTag(account.kind), h("a", { href: "#/account", id: "account-link", class: "small" }, "account"));
  } else {
    nameInput.value = conn.name;
    clear(who, h("label", {}, "Name ", nameInput),
      h("a", { href: "#/account", id: "account-link", class: "small" }, "log in / sign up"));
  }
});
// Another tab of this browser logged in or out, or changed the password:
// this one says hello again as the kept session now says.
window.addEventListener("storage", (e) => {
  const token = (text) => { try { return (JSON.parse(text).session || {}).token; } catch { return undefined; } };
  if (e.key === "grundy" && token(e.oldValue) !== token(e.newValue)) conn.again().catch(() => {});
});
clear(app,
  h("header", {},
    h("a", { href: "#/", class: "brand" }, "Grundy"),
    h("nav", {}, h("a", { href: "#/" }, "Lobby"), h("a", { href: "#/tournaments" }, "Tournaments"),
      h("a", { href: "#/leaderboard/nim" }, "Ratings"), h("a", { href: "#/analyze" }, "Analyze")),
    who, status),
  banner,
  view);

let current = null;
function route() {
  banner.hidden = true;
  if (current && current.dispose) current.dispose();
  const [, kind, id] = (location.hash || "#/").split("/");
  const views = {
    "": lobby, room, replay, tournaments, tournament, analyze,
    account: () => accountView(conn), player: profileView, leaderboard: leaderboardView,
  };
  current = (views[kind] || lobby)(decodeURIComponent(id || ""));
  clear(view, current.el);
  window.scrollTo(0, 0);
}
window.addEventListener("hashchange", route);

function errorLine() {
  const el = h("p", { class: "error", role: "alert" });
  el.show = (e) => { el.textContent = e ? (e.message || String(e)) : ""; };
  return el;
}

// ---- the lobby ----

function lobby() {
  const rooms = h("tbody");
  const total = h("span");
  const problem = errorLine();
  const refresh = async () => {
    try {
      const answer = await conn.send({ type: "list_rooms", limit: 100 });
      total.textContent = answer.total > answer.rooms.length ? `(${answer.rooms.length} of ${answer.total})` : "";
      clear(rooms, answer.rooms.length ? answer.rooms.map(roomRow) : h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No open rooms: create one.")));
    } catch (e) { problem.show(e); }
  };
  const roomRow = (r) => {
    const seated = store.seat(r.room);
    const players = r.seats.map((s, i) => h("span", { class: "player" },
      playerName(s.name, s.player_kind), r.ratings && r.ratings[i] ? ` (${Math.round(r.ratings[i])})` : ""));
    return h("tr", { dataset: { code: r.code } },
      h("td", {}, h("strong", {}, r.name), h("div", { class: "muted small" }, r.description)),
      h("td", {}, players[0], " vs ", players[1]),
      h("td", {}, r.state, r.tournament ? " · tournament" : "", r.hints ? h("span", { class: "tag", title: "both players may ask for hints" }, "hints") : "",
        r.rated ? h("span", { class: "tag", title: "the game moves both players' ratings" }, "rated") : ""),
      h("td", {}, clockWords(r.clock)),
      h("td", { class: "code" }, r.code),
      h("td", {},
        seated ? h("a", { href: `#/room/${r.room}`, class: "button" }, "Back to my seat")
          : r.state === "open" && !r.tournament ? h("button", { type: "button", onclick: () => join(r.code, problem) }, "Join") : "",
        " ", h("a", { href: `#/room/${r.room}`, class: "button secondary" }, "Watch")));
  };
  refresh();
  const timer = setInterval(refresh, 2000);

  const code = h("input", { id: "join-code", placeholder: "ABC234", maxlength: 32, "aria-label": "room code" });
  const joinForm = h("form", { class: "row", onsubmit: (e) => { e.preventDefault(); join(code.value.trim(), problem); } },
    code, h("button", { type: "submit" }, "Join"),
    h("button", { type: "button", class: "secondary", onclick: () => { location.hash = `#/room/${code.value.trim()}`; } }, "Watch"));

  return {
    el: h("section", { class: "lobby" },
      h("div", { class: "panels" },
        h("div", { class: "panel" }, h("h2", {}, "New game"), createForm(problem)),
        h("div", { class: "panel" }, h("h2", {}, "Join by code"), joinForm,
          h("p", { class: "muted small" }, "A friend's room code, or a room's id."))),
      problem,
      h("h2", {}, "Rooms ", total),
      h("table", { class: "rooms" }, h("thead", {}, h("tr", {}, ["Game", "Players", "State", "Clock", "Code", ""].map((t) => h("th", {}, t)))), rooms)),
    dispose: () => clearInterval(timer),
  };
}

async function join(code, problem) {
  if (!code) return problem.show("type a room code");
  try {
    const seated = await conn.send({ type: "join", room: code });
    store.setSeat(seated.room, { token: seated.token, seat: seated.seat, code: seated.snapshot.code });
    location.hash = `#/room/${seated.room}`;
  } catch (e) { problem.show(e); }
}

function option(value, text, selected) {
  return h("option", { value, selected: selected || null }, text);
}

function createForm(problem) {
  const game = h("select", { id: "game", "aria-label": "game" }, GAMES.map(([id, name]) => option(id, name, id === "nim")));
  const size = h("input", { id: "size", type: "number", min: 1, placeholder: "size (optional)", "aria-label": "size" });
  const start = h("select", { id: "start", "aria-label": "start" }, option("random", "random start", true), option("spec", "this position:"));
  const spec = h("textarea", { id: "spec", rows: 2, placeholder: "kayles 5 7 + wythoff 3 5", "aria-label": "position", hidden: true });
  start.addEventListener("change", () => { spec.hidden = start.value !== "spec"; size.hidden = start.value === "spec"; game.disabled = start.value === "spec"; });
  const opponent = h("select", { id: "opponent", "aria-label": "opponent" },
    option("perfect", "house bot: perfect", true),
    [9, 7, 5, 3, 1].map((n) => option(String(n), `house bot: level ${n}`)),
    option("random", "house bot: random moves"),
    option("", "a person (open room)"));
  const clock = h("select", { id: "clock", "aria-label": "clock" },
    option("", "untimed", true), option("60000+0", "1+0"), option("180000+2000", "3+2"),
    option("300000+3000", "5+3"), option("600000+5000", "10+5"), option("1800000+0", "30+0"));
  const seat = h("select", { id: "seat", "aria-label": "seat" }, option("0", "I move first", true), option("1", "I move second"), option("any", "either (random)"));
  const listed = h("input", { type: "checkbox", id: "listed", checked: true });
  const hints = h("input", { type: "checkbox", id: "hints" });
  const rated = h("input", { type: "checkbox", id: "rated" });
  return h("form", { class: "create", id: "create", onsubmit: async (e) => {
    e.preventDefault();
    problem.show(null);
    const msg = { type: "create_room", listed: listed.checked };
    if (start.value === "spec") {
      try { msg.spec = await readPosition(spec.value); } catch (err) { return problem.show(err); }
    } else {
      msg.random = { family: game.value, seed: Math.floor(Math.random() * 2 ** 52) };
      if (size.value) msg.random.size = Number(size.value);
    }
    if (clock.value) {
      const [initial, increment] = clock.value.split("+").map(Number);
      msg.clock = { initial_ms: initial, increment_ms: increment };
    }
    msg.seat = seat.value === "any" ? Math.round(Math.random()) : Number(seat.value);
    if (hints.checked) {
      if (msg.clock) return problem.show("hints are for untimed games: choose “untimed”, or no hints");
      msg.hints = true;
    }
    if (rated.checked) {
      if (opponent.value) return problem.show("rated games are between two accounts: choose “a person (open room)”, or unrated");
      if (msg.hints) return problem.show("a rated game has no hints: untick one of them");
      msg.rated = true;
    }
    if (opponent.value) msg.bot = opponent.value;
    try {
      const seated = await conn.send(msg);
      store.setSeat(seated.room, { token: seated.token, seat: seated.seat, code: seated.snapshot.code });
      location.hash = `#/room/${seated.room}`;
    } catch (err) { problem.show(err); }
  } },
  h("label", {}, "Game ", game), h("label", {}, "Start ", start, size), spec,
  h("label", {}, "Opponent ", opponent), h("label", {}, "Clock ", clock), h("label", {}, "Seat ", seat),
  h("label", { class: "check" }, listed, " shown in the lobby"),
  h("label", { class: "check", title: "both players may ask for hints; whoever joins agrees" }, hints, " hints for both (untimed)"),
  h("label", { class: "check", title: "the game moves both players' ratings; accounts only" }, rated, " rated (against a person, logged in)"),
  h("button", { type: "submit", class: "primary", id: "create-button" }, "Create"));
}

// ---- a room: play, watch, resume ----

function room(key) {
  const s = { room: null, code: key, seat: null, token: null, seq: 0, snapshot: null, receivedAt: performance.now(), last: null, review: null };
  const el = h("section", { class: "room" });
  const problem = errorLine();
  const note = h("p", { class: "note", role: "status" });
  let hintOpen = false;
  let hint = null; // the review step of the current position, when asked

  const mine = store.seat(key) || store.seatByCode(key);
  if (mine) { s.seat = mine.seat; s.token = mine.token; s.room = mine.room || key; }

  // Refusals that pass for a room this page already showed: a cluster's
  // node takes over a room whose node went away (`unknown_room` until it
  // has; `internal` from a node that could not reach the old one).
  const passing = (code) => ["internal", "busy", "shutting_down"].includes(code)
    || (code === "unknown_room" && s.snapshot != null);

  // `byAccount`: resume as the logged-in account, whose seat this may be
  // (a seat token that outlived its account token, after a password change).
  const subscribe = async (since, tries = 0, byAccount = false) => {
    const room = s.room || key;
    const msg = byAccount ? { type: "resume", room, token: "" }
      : s.token ? { type: "resume", room, token: s.token }
      : { type: "watch", room };
    if (since != null) msg.since = since;
    try {
      const answer = await conn.send(msg);
      problem.show(null);
      s.room = answer.room;
      if (byAccount) { s.seat = answer.seat; s.token = answer.token; }
      if (answer.snapshot) take(answer.snapshot);
      for (const event of answer.events) apply(event);
      render();
    } catch (e) {
      if (e.code === "unauthorized" && s.token) {
        s.token = null; s.seat = null;
        return subscribe(undefined, 0, conn.account != null);
      }
      if (e.code === "unauthorized" && byAccount) return subscribe();
      if (passing(e.code) && tries < 10) {
        problem.show(e);
        // Only while the room is still on screen.
        setTimeout(() => { if (el.isConnected) subscribe(since, tries + 1); }, 300 * (tries + 1));
        return;
      }
      if (e.code === "unknown_room") return showGone(e);
      problem.show(e);
    }
  };

  const showGone = (e) => {
    clear(el, h("h2", {}, "Room ", key), h("p", {}, e.message),
      h("p", {}, "A finished match stays in memory for a few minutes; its record is kept: ",
        h("a", { href: `#/replay/${s.room || key}` }, "replay it"), "."));
  };

  const take = (snap) => {
    s.snapshot = structuredClone(snap);
    s.code = snap.code;
    s.seq = snap.seq;
    s.receivedAt = performance.now();
    s.last = snap.moves.length ? snap.moves[snap.moves.length - 1] : null;
    if (s.token) store.setSeat(snap.room, { token: s.token, seat: s.seat, code: snap.code });
  };

  const apply = (event) => {
    const snap = s.snapshot;
    if (!snap || event.seq <= s.seq) return;
    if (event.seq > s.seq + 1) { subscribe(s.seq); return; }
    s.seq = event.seq;
    snap.seq = event.seq;
    switch (event.kind) {
      case "seated": snap.seats[event.seat] = { name: event.name, connected: true, player_kind: event.player_kind }; break;
      case "started": snap.to_move = 0; s.receivedAt = performance.now(); break;
      case "moved":
        snap.moves.push(event.move);
        s.last = event.move;
        snap.clocks_ms = event.clocks_ms;
        s.receivedAt = performance.now();
        snap.to_move = 1 - event.seat;
        hint = null;
        if (event.position) snap.position = event.position;
        else subscribe(); // too large to send: a fresh snapshot has it
        break;
      case "presence": snap.seats[event.seat].connected = event.connected; break;
      case "ended": snap.result = event.result; snap.to_move = null; break;
    }
  };

  // A rematch is an offer and an accept in this finished room
  // (docs/protocol.md): `s.offer` is the standing one, {seat, name}; `s.offerNote`
  // says what became of the last one.
  const onRematch = (msg) => {
    if (msg.type === "rematch_offered") {
      s.offer = { seat: msg.seat, name: msg.name };
      s.offerNote = null;
    } else if (msg.type === "rematch_withdrawn") {
      s.offer = null;
      const other = s.snapshot ? s.snapshot.seats[1 - (s.seat ?? 0)].name || "Your opponent" : "Your opponent";
      const mine = msg.seat === s.seat;
      s.offerNote = {
        declined: mine ? `${other} declined the rematch.` : "The rematch was declined.",
        withdrawn: mine ? "You took the rematch offer back." : `${other} took the rematch offer back.`,
        left: mine ? "The rematch offer is void: you left the room." : `The rematch offer is void: ${other} left.`,
        closed: "The rematch offer is void: the room has closed.",
        failed: "The rematch room could not be made.",
      }[msg.reason] || "The rematch offer is void.";
    } else if (msg.type === "rematch_ready") {
      store.setSeat(msg.new_room, { token: msg.token, seat: msg.seat, code: msg.code });
      location.hash = `#/room/${msg.new_room}`;
      return;
    }
    render();
  };
  const stopListening = conn.listen((msg) => {
    if (!s.room || msg.room !== s.room) return;
    if (msg.type === "event") {
      apply(msg.event);
      render();
    } else if (msg.type.startsWith("rematch_")) {
      onRematch(msg);
    }
  });
  const stopResuming = conn.onReconnect(() => subscribe(s.snapshot ? s.seq : undefined));


  const send = async (msg) => {
    problem.show(null);
    try { return await conn.send({ ...msg, room: s.room, token: s.token }); } catch (e) { problem.show(e); return null; }
  };
  const move = (mv) => send({ type: "move", move: mv });

  // The board is drawn anew only when what it shows changes: an event that
  // changes something else (a presence, a clock) must not swap the stones
  // under a click in progress.
  let drawn = { key: null, el: null };
  const boardFor = (snap, myTurn) => {
    const key = JSON.stringify([snap.position, myTurn, s.last]);
    if (drawn.key === key) return null;
    const typed = h("input", { id: "typed", placeholder: typingHelp(snap.position), "aria-label": "type a move", autocomplete: "off" });
    const typedForm = myTurn ? h("form", { class: "row typed", onsubmit: (e) => {
      e.preventDefault();
      readMove(typed.value, s.room).then((mv) => { move(mv); typed.value = ""; }, (err) => problem.show(err));
    } }, typed, h("button", { type: "submit" }, "Play")) : "";
    drawn = { key, el: [board(snap.position, { interactive: myTurn, onMove: move, last: s.last }), typedForm] };
    return drawn.el;
  };
  // The parts of the page an event redraws; the board stays in the page
  // while it shows the same thing.
  const head = h("div");
  const boardWrap = h("div", { class: "board-wrap" });
  const aside = h("aside");
  const layout = [head, problem, note, h("div", { class: "play" }, boardWrap, aside)];

  const clocks = [h("span", { class: "clock" }), h("span", { class: "clock" })];
  const bankNow = (seat) => {
    const snap = s.snapshot;
    let ms = snap.clocks_ms[seat];
    if (snap.clock && snap.to_move === seat && !snap.result) ms -= performance.now() - s.receivedAt;
    return ms;
  };
  const tick = () => {
    if (!s.snapshot || !s.snapshot.clock) return;
    for (const seat of [0, 1]) {
      const ms = bankNow(seat);
      clocks[seat].textContent = formatClock(ms);
      clocks[seat].classList.toggle("low", ms < 10000);
      clocks[seat].classList.toggle("running", s.snapshot.to_move === seat && !s.snapshot.result);
    }
  };
  const timer = setInterval(tick, 100);

  // Hints in casual games only: against a house bot, or where the room
  // allows them (untimed, and whoever joined agreed); in any game once over.
  const casual = () => {
    const snap = s.snapshot;
    return snap.bot != null || snap.hints || !!snap.result;
  };

  const render = () => {
    const snap = s.snapshot;
    if (!snap) return;
    const over = !!snap.result;
    const online = conn.state === "connected";
    const myTurn = s.seat != null && snap.to_move === s.seat && !over && online;
    const players = snap.seats.map((seat) => seat.name);
    const playerBox = (seat) => h("div", { class: `player-box${snap.to_move === seat && !over ? " to-move" : ""}`, dataset: { seat } },
      h("span", { class: `dot${snap.seats[seat].connected ? " on" : ""}`, title: snap.seats[seat].connected ? "connected" : "away" }),
      h("span", { class: "pname" }, snap.seats[seat].name ? playerName(snap.seats[seat].name, snap.seats[seat].player_kind) : h("em", {}, "waiting for a player"),
        s.seat === seat ? " (you)" : ""),
      h("span", { class: "muted small" }, seat === 0 ? " moves first" : ""),
      snap.clock ? clocks[seat] : "");
    let line;
    if (!online) line = `Connection lost: reconnecting…${s.seat != null ? " Your seat is kept." : ""}`;
    else if (over) line = resultWords(snap.result, players, s.seat);
    else if (snap.to_move == null) line = `Waiting for a second player: share the code ${snap.code}.`;
    else if (myTurn) line = "Your move.";
    else if (s.seat != null) line = `${players[snap.to_move] || "Your opponent"} to move…`;
    else line = `${players[snap.to_move] || `Seat ${snap.to_move}`} to move.`;

    const movesList = h("ol", { class: "moves", id: "moves" }, snap.moves.map((m, i) => {
      const reviewed = s.review && s.review.moves[i];
      const mistake = reviewed && reviewed.mistake;
      const better = mistake && s.review.steps[i].best_move;
      return h("li", { class: mistake ? "mistake" : "", title: mistake ? `gave the win away; ${moveWords(better, snap.position)} would have won` : null },
        moveWords(m, snap.position), mistake ? h("span", { class: "mark" }, " ✗ gave the win away") : "");
    }));

    const myMoves = snap.moves.filter((_, i) => i % 2 === (s.seat ?? -1)).length;
    const actions = [];
    if (s.seat != null && !over) {
      const canAbort = snap.to_move == null || myMoves === 0;
      if (canAbort) actions.push(h("button", { type: "button", id: "abort", class: "secondary", onclick: () => send({ type: "abort" }) }, "Abort"));
      if (snap.to_move != null) actions.push(h("button", { type: "button", id: "resign", class: "danger", onclick: () => { if (confirm("Resign this game?")) send({ type: "resign" }); } }, "Resign"));
    }
    let offerLine = s.offerNote ? h("p", { class: "muted", id: "rematch-note" }, s.offerNote) : "";
    if (over && s.seat != null && !(store.seat(s.room) || {}).tournament) {
      const offer = s.offer;
      if (offer && offer.seat === s.seat) {
        const other = players[1 - s.seat] || "your opponent";
        offerLine = h("p", { class: "note", id: "rematch-note" }, `Rematch offered — waiting for ${other}`);
        actions.push(h("button", { type: "button", id: "rematch-withdraw", class: "secondary", onclick: () => answerRematch("decline_rematch") }, "Withdraw the offer"));
      } else if (offer) {
        offerLine = h("p", { class: "note", id: "rematch-note" }, `${offer.name || "Your opponent"} offers a rematch`);
        actions.push(h("button", { type: "button", id: "rematch-accept", onclick: () => answerRematch("accept_rematch") }, "Accept"));
        actions.push(h("button", { type: "button", id: "rematch-decline", class: "secondary", onclick: () => answerRematch("decline_rematch") }, "Decline"));
      } else {
        actions.push(h("button", { type: "button", id: "rematch", onclick: () => answerRematch("offer_rematch") }, "Rematch (seats swapped)"));
      }
    }
    if (over) actions.push(h("a", { href: `#/replay/${snap.room}`, class: "button secondary", id: "replay-link" }, "Replay and review"));
    if (casual() && !over) actions.push(h("button", { type: "button", id: "hint", class: "secondary", onclick: () => { hintOpen = !hintOpen; render(); } }, hintOpen ? "Hide hint" : "Hint"));

    if (el.firstChild !== head) clear(el, layout);
    clear(head,
      h("div", { class: "room-head" },
        h("h2", {}, specName(snap.spec) || snap.spec.game),
        h("span", { class: "muted" }, " code ", h("strong", { class: "code", id: "room-code" }, snap.code), " · ", clockWords(snap.clock),
          snap.hints ? " · hints for both" : "", snap.rated ? " · rated" : "")),
      h("div", { class: "players" }, playerBox(0), playerBox(1)),
      h("p", { class: `turn${myTurn ? " mine" : ""}${over ? " over" : ""}`, id: "turn" }, line));
    const redrawn = boardFor(snap, myTurn);
    if (redrawn) clear(boardWrap, redrawn);
    clear(aside,
      h("div", { class: "actions" }, actions),
      offerLine,
      hintOpen && casual() && !over ? hintPanel() : "",
      h("h3", {}, "Moves"), snap.moves.length ? movesList : h("p", { class: "muted" }, "none yet"));
    tick();
    if (hintOpen && !hint && !over) loadHint();
    if (over && !s.review) loadReview();
  };

  const hintPanel = () => h("div", { class: "hint", id: "hint-panel" },
    hint ? analysisView(hint, s.snapshot.position) : h("p", { class: "muted" }, "Thinking…"));

  const loadHint = async () => {
    try {
      const review = await api(`/api/matches/${s.room}/review`);
      hint = review.steps[review.steps.length - 1];
      render();
    } catch (e) { problem.show(e); }
  };

  const loadReview = async () => {
    s.review = { moves: [], steps: [] }; // asked once
    try { s.review = await api(`/api/matches/${s.room}/review`); render(); } catch { /* the move list stays unmarked */ }
  };

  // Offer, accept or decline: the server answers with notices (`onRematch`).
  const answerRematch = async (type) => {
    s.offerNote = null;
    await send({ type });
    render();
  };

  // While the connection is down the board waits (a click could not reach
  // the server), and the page says why.
  const stopStatus = conn.onStatus(() => render());
  subscribe();
  return {
    el,
    busy: true,
    dispose: () => {
      clearInterval(timer);
      stopListening();
      stopResuming();
      stopStatus();
      if (s.room) conn.send({ type: "leave", room: s.room }).catch(() => {});
    },
  };
}

// ---- learning: the analysis of a position ----

function analysisView(step, view) {
  if (!step || step.outcome == null) return h("p", {}, "The game is over.");
  const win = step.outcome === "N";
  const parts = [
    h("p", { class: `outcome ${win ? "n" : "p"}` }, win
      ? "N-position: the player to move wins with perfect play."
      : "P-position: the player to move loses against perfect play."),
    step.grundy != null ? h("p", {}, "Grundy value ", h("strong", { class: "grundy" }, step.grundy)) : "",
  ];
  if (step.components && step.components.length) parts.push(binaryTable(step.components));
  if (win) {
    const more = step.winning_move_count == null || step.winning_move_count > step.winning_moves.length;
    parts.push(h("p", {}, "Winning moves:"), h("ul", { class: "winning" },
      step.winning_moves.map((m) => h("li", {}, moveWords(m, view))), more ? h("li", { class: "muted" }, "…and more") : ""));
  } else if (step.best_move) {
    parts.push(h("p", {}, "Every move loses; the longest fight: ", moveWords(step.best_move, view), "."));
  }
  return h("div", { class: "analysis" }, parts);
}

/// The binary table: each part's value in binary, the nim-sum row, and the
/// columns with an odd number of ones (the ones a winning move must fix).
function binaryTable(components) {
  const values = components.map((c) => BigInt(c.value));
  const sum = values.reduce((a, b) => a ^ b, 0n);
  const width = Math.max(1, ...[...values, sum].map((v) => v.toString(2).length));
  const bits = (v) => v.toString(2).padStart(width, "0").split("");
  const odd = bits(sum).map((b) => b === "1");
  const row = (label, v, cls) => h("tr", { class: cls || "" }, h("th", {}, label), h("td", { class: "dec" }, v.toString()),
    bits(v).map((b, i) => h("td", { class: odd[i] ? "odd" : "" }, b)));
  return h("table", { class: "binary", id: "binary-table" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), h("th", {}, "value"), bits(0n).map((_, i) => h("th", {}, 2 ** (width - 1 - i))))),
    h("tbody", {}, components.map((c, i) => row(c.label, values[i])), row("nim-sum", sum, "sum")));
}

// ---- replay and review ----

function replay(id) {
  const el = h("section", { class: "replay" }, h("p", {}, "Loading the record…"));
  let at = 0;
  let review = null;
  const show = () => {
    const r = review;
    const step = r.steps[at];
    const view = step.position || r.spec;
    const last = at > 0 ? r.moves[at - 1].move : null;
    const go = (i) => { at = Math.max(0, Math.min(r.moves.length, i)); show(); };
    const mistakes = r.moves.filter((m) => m.mistake).length;
    clear(el,
      h("div", { class: "room-head" }, h("h2", {}, "Replay: ", specName(r.spec)),
        h("span", { class: "muted" }, ` ${r.players[0] || "?"} vs ${r.players[1] || "?"} · `,
          r.result ? resultWords(r.result, r.players, null) : "still playing")),
      h("div", { class: "stepper" },
        h("button", { type: "button", id: "first", onclick: () => go(0), title: "the start" }, "◀◀"),
        h("button", { type: "button", id: "back", onclick: () => go(at - 1) }, "◀"),
        h("span", { id: "ply" }, `move ${at} of ${r.moves.length}`),
        h("button", { type: "button", id: "forward", onclick: () => go(at + 1) }, "▶"),
        h("button", { type: "button", id: "last", onclick: () => go(r.moves.length), title: "the end" }, "▶▶"),
        h("a", { class: "button secondary", href: `/api/matches/${r.room}?download=true` }, "Download")),
      h("p", { class: "muted" }, mistakes ? `${mistakes} move${mistakes > 1 ? "s" : ""} gave a won position away (✗).` : "No move gave a won position away."),
      h("div", { class: "play" },
        h("div", { class: "board-wrap" }, step.position ? board(view, { last }) : h("p", {}, "This position is too large to draw.")),
        h("aside", {},
          at > 0 && r.moves[at - 1].mistake ? h("p", { class: "mistake", id: "mistake-note" },
            `✗ ${moveWords(r.moves[at - 1].move, view)} gave the win away; ${moveWords(r.steps[at - 1].best_move, view)} would have won.`) : "",
          analysisView(step, view),
          h("h3", {}, "Moves"),
          h("ol", { class: "moves" }, r.moves.map((m, i) => h("li", {
            class: `${m.mistake ? "mistake" : ""}${i === at - 1 ? " current" : ""}`,
            onclick: () => go(i + 1),
          }, `${r.players[m.seat] || `seat ${m.seat}`}: ${moveWords(m.move, r.steps[i].position || r.spec)}`, m.mistake ? h("span", { class: "mark" }, " ✗") : ""))))));
  };
  const keys = (e) => {
    if (!review || e.target.tagName === "INPUT") return;
    if (e.key === "ArrowLeft") { at = Math.max(0, at - 1); show(); }
    if (e.key === "ArrowRight") { at = Math.min(review.moves.length, at + 1); show(); }
  };
  document.addEventListener("keydown", keys);
  api(`/api/matches/${id}/review`).then((r) => { review = r; at = r.moves.length; show(); })
    .catch((e) => clear(el, h("h2", {}, "Replay"), h("p", { class: "error" }, e.message)));
  return { el, dispose: () => document.removeEventListener("keydown", keys) };
}

// ---- the analysis board ----

function analyze() {
  const spec = h("textarea", { id: "analyze-spec", rows: 3, "aria-label": "position" }, "nim 3 4 5");
  const out = h("div", { id: "analysis" });
  const problem = errorLine();
  const run = async () => {
    problem.show(null);
    try {
      const value = await readPosition(spec.value);
      const a = await api(`/api/analyze?limit=20&spec=${encodeURIComponent(JSON.stringify(value))}`);
      clear(out, board(value), analysisView({ ...a, winning_moves: a.winning_moves }, value));
    } catch (e) { problem.show(e); clear(out); }
  };
  run();
  return {
    el: h("section", {}, h("h2", {}, "Analyze a position"),
      h("form", { onsubmit: (e) => { e.preventDefault(); run(); } }, spec, h("button", { type: "submit" }, "Analyze")),
      h("p", { class: "muted small" }, "As grundy analyze takes it: nim 3 4 5, kayles --misere 5 7, bash --k 3 5 6, subtraction --set 1,3,4 10, treblecross ..X.., darkraft RL LR, sums joined by + (kayles 5 7 + wythoff 3 5); or a JSON spec."),
      problem, out),
  };
}

// ---- tournaments ----

function tournaments() {
  const list = h("tbody");
  const problem = errorLine();
  const refresh = async () => {
    try {
      const answer = await conn.send({ type: "list_tournaments" });
      clear(list, answer.tournaments.length ? answer.tournaments.map((t) => h("tr", {},
        h("td", {}, h("a", { href: `#/tournament/${t.tournament}` }, t.name || t.code)),
        h("td", {}, specName({ game: t.game }) || t.game), h("td", {}, t.format.replace("_", " ")),
        h("td", {}, t.status), h("td", {}, `${t.players}/${t.max_players}`),
        h("td", {}, t.rounds ? `${t.round}/${t.rounds}` : "–"), h("td", { class: "code" }, t.code)))
        : h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No tournament is registering or running.")));
    } catch (e) { problem.show(e); }
  };
  refresh();
  const timer = setInterval(refresh, 3000);
  const family = h("select", { "aria-label": "game" }, GAMES.map(([id, name]) => option(id, name, id === "nim")));
  const format = h("select", { "aria-label": "format" }, option("round_robin", "round robin", true), option("swiss", "Swiss"));
  const rounds = h("input", { type: "number", min: 1, max: 1000, placeholder: "rounds (Swiss)", "aria-label": "rounds" });
  const name = h("input", { placeholder: "title (optional)", maxlength: 80, "aria-label": "title" });
  const rated = h("input", { type: "checkbox", id: "rated" });
  const clock = h("select", { "aria-label": "clock" }, option("60000+1000", "1+1"), option("120000+2000", "2+2", true), option("300000+3000", "5+3"));
  const create = h("form", { class: "create", onsubmit: async (e) => {
    e.preventDefault();
    const [initial, increment] = clock.value.split("+").map(Number);
    const msg = { type: "create_tournament", format: format.value, family: family.value, clock: { initial_ms: initial, increment_ms: increment } };
    if (rounds.value) msg.rounds = Number(rounds.value);
    if (name.value.trim()) msg.name = name.value.trim();
    if (rated.checked) msg.rated = true;
    try {
      const made = await conn.send(msg);
      store.setEntry(made.tournament, { owner: made.owner_token });
      location.hash = `#/tournament/${made.tournament}`;
    } catch (err) { problem.show(err); }
  } }, h("label", {}, "Game ", family), h("label", {}, "Format ", format), rounds, h("label", {}, "Clock ", clock), name,
  h("label", { title: "only accounts may create or play a rated tournament" }, rated, "rated"),
  h("button", { type: "submit", class: "primary" }, "Create tournament"));
  return {
    el: h("section", {}, h("h2", {}, "Tournaments"), problem,
      h("table", { class: "rooms" }, h("thead", {}, h("tr", {}, ["Name", "Game", "Format", "Status", "Players", "Round", "Code"].map((t) => h("th", {}, t)))), list),
      h("div", { class: "panel" }, h("h3", {}, "New tournament"), create)),
    dispose: () => clearInterval(timer),
  };
}

function tournament(key) {
  const el = h("section", { class: "tournament" }, h("p", {}, "Loading…"));
  const problem = errorLine();
  let state = null;
  let id = key;
  const entry = () => store.entry(id) || {};
  const load = async () => {
    try {
      const answer = await conn.send({ type: "get_tournament", tournament: id });
      state = answer.state;
      id = state.tournament;
      render();
    } catch (e) { problem.show(e); clear(el, h("h2", {}, "Tournament"), problem); }
  };
  const follow = async () => {
    const mine = entry();
    try {
      if (mine.token) await rejoin(id);
      else await conn.send({ type: "watch_tournament", tournament: id });
    } catch (e) { problem.show(e); }
    load();
  };
  const stopListening = conn.listen((msg) => {
    if (msg.tournament !== id) return;
    if (msg.type === "tournament_event") load();
  });
  // A reconnect rejoins played tournaments (above); a watcher watches again.
  const stopResuming = conn.onReconnect(() => (entry().token ? load() : follow()));
  const register = async (name) => {
    try {
      const answer = await conn.send({ type: "register", tournament: id, name: name || undefined });
      store.setEntry(id, { ...entry(), token: answer.token, player: answer.player });
      playing.add(id);
      state = answer.state;
      render();
    } catch (e) { problem.show(e); }
  };
  const render = () => {
    const t = state;
    const mine = entry();
    const name = h("input", { value: store.name(), maxlength: 40, "aria-label": "player name" });
    const names = Object.fromEntries(t.players.map((p) => [p.player, p.name]));
    clear(el,
      h("div", { class: "room-head" }, h("h2", {}, t.settings.name || `Tournament ${t.code}`),
        h("span", { class: "muted" }, ` ${specName({ game: t.settings.family || (t.settings.spec && t.settings.spec.game) })} · ${t.settings.format.replace("_", " ")} · ${t.status}`,
          t.rounds ? ` · round ${t.round} of ${t.rounds}` : "", " · code ", h("strong", { class: "code" }, t.code))),
      problem,
      // An account registers under its username: no name to type.
      t.status === "registering" && mine.token == null ? h("form", { class: "row", onsubmit: (e) => { e.preventDefault(); register(conn.account ? "" : name.value.trim()); } },
        conn.account ? h("span", {}, "as ", playerName(conn.account.username, conn.account.kind)) : name,
        h("button", { type: "submit", class: "primary" }, "Join as a player")) : "",
      t.settings.rated ? h("p", { class: "muted small" }, "Rated: only accounts play, and each round moves their ratings.") : "",
      mine.token != null ? h("p", { class: "muted" }, `You play as player ${mine.player}.`) : "",
      t.status === "registering" && mine.owner ? h("button", { type: "button", class: "primary", onclick: async () => {
        try { await conn.send({ type: "start_tournament", tournament: id, token: mine.owner }); } catch (e) { problem.show(e); }
      } }, `Start (${t.players.length} players)`) : "",
      h("h3", {}, "Standings"),
      h("table", { class: "standings" }, h("thead", {}, h("tr", {}, ["#", "Player", "Score", "Games", "W", "L", "Byes", "Buchholz", "SB", "Rating"].map((x) => h("th", {}, x)))),
        h("tbody", {}, (t.standings.length ? t.standings : t.players.map((p) => ({ rank: "", player: p.player, name: p.name, player_kind: p.player_kind, score: 0, games: 0, wins: 0, losses: 0, byes: 0, buchholz: 0, sonneborn_berger: 0, rating: null, withdrawn: p.withdrawn })))
          .map((r) => h("tr", { class: r.withdrawn ? "muted" : "" }, [r.rank, playerName(r.name, r.player_kind), r.score, r.games, r.wins, r.losses, r.byes, r.buchholz, r.sonneborn_berger, r.rating == null ? "–" : Math.round(r.rating)].map((x) => h("td", {}, x)))))),
      h("h3", {}, "Games"),
      t.games.length ? h("table", { class: "games" }, h("tbody", {}, [...t.games].reverse().map((g) => h("tr", {},
        h("td", {}, `round ${g.round}`),
        h("td", {}, `${names[g.players[0]]} vs ${names[g.players[1]]}`),
        h("td", {}, g.result ? (g.winner != null ? `${names[g.winner]} won (${g.result.reason})` : g.result.reason) : "playing"),
        h("td", {}, g.room ? h("a", { href: g.result ? `#/replay/${g.room}` : `#/room/${g.room}` }, g.result ? "replay" : "watch") : "forfeit")))))
        : h("p", { class: "muted" }, "No game yet."));
  };
  follow();
  return { el, dispose: () => { stopListening(); stopResuming(); } };
}

route();
