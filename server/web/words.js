// Names, moves and results in words, and how to type moves in the short
// forms of `grundy play` (which the server reads: net.js, /api/parse).

export const GAMES = [
  ["nim", "Nim"],
  ["kayles", "Kayles"],
  ["dawson", "Dawson's Kayles"],
  ["lasker", "Lasker's Nim"],
  ["grundy", "Grundy's game"],
  ["bash", "Bash"],
  ["subtraction", "Subtraction game"],
  ["heaps", "Heap game"],
  ["wythoff", "Wythoff"],
  ["moore", "Moore's Nim"],
  ["new-stone", "New Stone Game"],
  ["staircase", "Staircase Nim"],
  ["treblecross", "Treblecross"],
  ["darkraft", "World of Darkraft"],
  ["twist", "Twist"],
  ["graph", "Graph game"],
  ["mock-turtles", "Mock Turtles"],
  ["ruler", "Ruler"],
  ["turning-corners", "Turning Corners"],
  ["mix", "Sum of games (a random mix)"],
];

export function gameName(id) {
  if (id === "sum") return "Sum of games";
  const hit = GAMES.find(([g]) => g === id);
  return hit ? hit[1] : id;
}

/// The game a spec or a position view belongs to, as people call it: an
/// octal rule that is Kayles or Dawson's Kayles is named so.
export function specName(spec) {
  if (!spec) return "";
  if (spec.game === "heaps") {
    const rule = JSON.stringify(spec.rule || null);
    if (rule === '{"octal":"0.77"}') return "Kayles";
    if (rule === '{"octal":"0.07"}') return "Dawson's Kayles";
    if (rule === '"lasker"') return "Lasker's Nim";
    if (rule === '"grundy"') return "Grundy's game";
  }
  if (spec.game === "nim" && spec.misere) return "Misère Nim";
  return gameName(spec.game);
}

export const REASONS = {
  rules: "by the rules",
  move_limit: "at the move limit (the theory decided)",
  resign: "by resignation",
  flag: "on time",
  abort: "called off",
  no_show: "no first move in time",
};

export function resultWords(result, players, mySeat) {
  if (!result) return "";
  if (result.winner == null) return `No winner: ${REASONS[result.reason] || result.reason}.`;
  const who = mySeat == null
    ? (players[result.winner] || `Seat ${result.winner}`) + " wins"
    : result.winner === mySeat ? "You win" : "You lose";
  return `${who} ${REASONS[result.reason] || result.reason}.`;
}

/// A move in words, for the move list and the hints.
export function moveWords(move, view) {
  if (!move) return "";
  if (move.part != null) {
    const part = view && view.parts ? view.parts[move.part] : null;
    return `in part ${move.part}${part ? ` (${specName(part)})` : ""}: ${moveWords(move.move, part)}`;
  }
  if (move.split) return `split into ${move.split.join(" + ")}`;
  if (move.heap != null) {
    let s = move.take === 0 ? `split heap ${move.heap}` : `take ${move.take} from heap ${move.heap}`;
    if (move.leave && move.leave.length === 2) s += `, leaving ${move.leave[0]} and ${move.leave[1]}`;
    if (move.give && move.give.length) s += `, move ${move.give.map(([j, a]) => `${a} to heap ${j}`).join(", ")}`;
    return s;
  }
  if (move.take && view && view.game === "wythoff") {
    const [x, y] = move.take;
    if (x && y) return `take ${x} from both`;
    return x ? `take ${x} from heap A` : `take ${y} from heap B`;
  }
  if (Array.isArray(move.take)) return "take " + move.take.map(([h, k]) => `${k} from heap ${h}`).join(", ");
  if (move.from != null) return `move the piece on ${move.from} to ${move.to}`;
  if (move.cell != null) return `X on cell ${move.cell}`;
  if (move.row != null) return `cell (${move.row}, ${move.col})`;
  if (move.token != null) return `token ${move.token} to vertex ${move.to}`;
  if (Array.isArray(move.turn)) {
    if (move.turn.some(Array.isArray)) return "turn " + move.turn.map((c) => `(${c[0]}, ${c[1]})`).join(", ");
    return `turn coin${move.turn.length === 1 ? "" : "s"} ${move.turn.join(", ")}`;
  }
  return JSON.stringify(move);
}

/// How to type moves of this game (shown beside the input).
export function typingHelp(view) {
  switch (view.game) {
    case "nim": return "`2 3` takes 3 from heap 2";
    case "heaps": return "`2 3` takes 3 from heap 2; `2 1 3 4` also leaves heaps 3 and 4; `split 2 3 4` (Lasker's Nim, Grundy's game)";
    case "wythoff": return "`a 3`, `b 3` or `both 3`";
    case "moore": return "`0:2 3:1` takes 2 from heap 0 and 1 from heap 3";
    case "new-stone": return "`0 3 2:1` takes 3 from heap 0 and moves 1 of it to heap 2";
    case "staircase": return "`6 4` moves the piece on cell 6 to cell 4";
    case "treblecross": return "`5` puts an X on cell 5";
    case "darkraft": return "`2 3` chooses row 2, column 3";
    case "graph": return "`1 7` moves token 1 to vertex 7";
    case "twist": return "`4+6` splits the stones into 4 and 6";
    case "mock-turtles": return "`1 2 4` turns coins 1, 2 and 4";
    case "ruler": return "`2 3 4` turns coins 2 to 4";
    case "turning-corners": return "`0:1 2:3` turns the corners of rows 0 and 2, columns 1 and 3";
    case "sum": return "the part, a colon, then its move: `0: 2 3` plays `2 3` in part 0";
    default: return "the move as JSON";
  }
}

export function formatClock(ms) {
  ms = Math.max(0, ms);
  const s = Math.floor(ms / 1000);
  const m = Math.floor(s / 60);
  const h = Math.floor(m / 60);
  const pad = (n) => String(n).padStart(2, "0");
  if (h > 0) return `${h}:${pad(m % 60)}:${pad(s % 60)}`;
  if (ms < 10000) return `${m}:${pad(s % 60)}.${Math.floor((ms % 1000) / 100)}`;
  return `${m}:${pad(s % 60)}`;
}

export function clockWords(clock) {
  if (!clock) return "untimed";
  const min = clock.initial_ms / 60000;
  const inc = (clock.increment_ms || 0) / 1000;
  return `${Number.isInteger(min) ? min : min.toFixed(1)}+${inc}`;
}
