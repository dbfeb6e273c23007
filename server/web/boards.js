// A board you click for every family of docs/games.md. `board(view, opts)`
// draws the position view the server sends (a spec that starts there, or
// Darkraft's grid with `.`) and, when `opts.interactive`, turns clicks into a
// move for `opts.onMove(move)`. The server checks every move: a refused one
// comes back with the engine's reason, which the page shows.

import { h } from "./dom.js";
import { specName } from "./words.js";

/// Heaps are drawn stone by stone up to this size; larger ones as a number.
const MAX_STONES = 40;

export function board(view, opts = {}) {
  const o = { interactive: false, onMove: () => {}, last: null, ...opts };
  const el = (() => {
    switch (view.game) {
      case "nim": return heapsBoard(view, o);
      case "heaps": return heapsBoard(view, o);
      case "wythoff": return wythoffBoard(view, o);
      case "moore": return mooreBoard(view, o);
      case "new-stone": return newStoneBoard(view, o);
      case "staircase": return staircaseBoard(view, o);
      case "treblecross": return treblecrossBoard(view, o);
      case "darkraft": return darkraftBoard(view, o);
      case "graph": return graphBoard(view, o);
      case "coins": case "mock-turtles": case "ruler": case "turning-corners": return coinsBoard(view, o);
      case "twist": return twistBoard(view, o);
      case "sum": return sumBoard(view, o);
      default: return h("pre", {}, JSON.stringify(view, null, 1));
    }
  })();
  el.classList.add("board", `board-${view.game}`);
  if (o.interactive) el.classList.add("interactive");
  return el;
}

/// [{size, rule}] for every heap view (nim, heaps, moore, new-stone).
export function heapsOf(view) {
  const top = view.rule ?? (view.game === "heaps" ? null : "any");
  return view.heaps.map((heap) =>
    typeof heap === "object" ? { size: heap.size, rule: heap.rule ?? top } : { size: heap, rule: top });
}

function ruleKind(rule) {
  if (rule && typeof rule === "object" && rule.octal) return "octal";
  if (rule === "lasker") return "lasker";
  if (rule === "grundy") return "grundy";
  return "take";
}

function ruleWords(rule) {
  if (rule == null || rule === "any") return "";
  if (rule === "odd") return "take an odd number";
  if (rule === "half") return "take at least half";
  if (rule === "lasker") return "take any, or split in two";
  if (rule === "grundy") return "split into two unequal heaps";
  if (rule.upto) return `take 1 to ${rule.upto}`;
  if (rule.set) return `take ${rule.set.join(" or ")}`;
  if (rule.octal === "0.77") return "Kayles: knock down 1 or 2 adjacent pins";
  if (rule.octal === "0.07") return "Dawson's: knock down 2 adjacent pins";
  if (rule.octal) return `octal ${rule.octal}: mark the stones to take`;
  return JSON.stringify(rule);
}

/// Which heap the last move changed, for the mark.
function lastHeap(last) {
  return last && last.heap != null ? last.heap : null;
}

function stones(size, cls, onPick, onHover) {
  const row = h("div", { class: "stones" });
  for (let j = 0; j < size; j++) {
    const stone = h("button", {
      class: `stone ${cls(j)}`,
      type: "button",
      "aria-label": `stone ${j + 1} of ${size}`,
      dataset: { stone: j },
      onclick: () => onPick(j),
      onmouseenter: () => onHover && onHover(j, row),
      onfocus: () => onHover && onHover(j, row),
    });
    row.append(stone);
  }
  row.addEventListener("mouseleave", () => onHover && onHover(null, row));
  return row;
}

/// Marks stones j.. of a row (what a click takes).
function hoverTail(j, row) {
  for (const s of row.children) {
    s.classList.toggle("pick", j != null && Number(s.dataset.stone) >= j);
  }
}

/// Grundy's game: the stones up to the one under the pointer are the first
/// heap of the split.
function hoverSplit(j, row) {
  for (const s of row.children) {
    s.classList.toggle("pick", j != null && Number(s.dataset.stone) <= j);
  }
}

function numberInput(max, label) {
  return h("input", { type: "number", min: 0, max, step: 1, class: "amount", "aria-label": label, placeholder: label });
}

function heapsBoard(view, o) {
  const heaps = heapsOf(view);
  const el = h("div", { class: "heaps" });
  let selection = null; // octal: {heap, start}
  const marked = lastHeap(o.last);
  const render = () => {
    el.replaceChildren();
    heaps.forEach(({ size, rule }, i) => {
      const kind = ruleKind(rule);
      const label = h("div", { class: "heap-label" }, h("span", { class: "heap-index" }, `heap ${i}`),
        h("span", { class: "heap-size" }, size), h("span", { class: "rule" }, ruleWords(rule)));
      const row = h("div", { class: `heap-row${i === marked ? " last" : ""}`, dataset: { heap: i } }, label);
      if (size <= MAX_STONES) {
        if (kind === "octal") {
          const sel = selection && selection.heap === i ? selection.start : null;
          row.append(stones(size, (j) => (j === sel ? "selected" : ""), (j) => {
            if (!o.interactive) return;
            if (sel == null) { selection = { heap: i, start: j }; render(); return; }
            const a = Math.min(sel, j), b = Math.max(sel, j);
            selection = null;
            const leave = [a, size - 1 - b].filter((x) => x > 0);
            o.onMove({ heap: i, take: b - a + 1, leave });
          }, (j, r) => {
            for (const s of r.children) {
              const k = Number(s.dataset.stone);
              s.classList.toggle("pick", j != null && (sel == null ? k === j : k >= Math.min(sel, j) && k <= Math.max(sel, j)));
            }
          }));
        } else if (kind === "grundy") {
          // A click after stone j splits the heap into j + 1 and the rest (the
          // server says why when the two are equal, or the rest is empty).
          row.append(stones(size, () => "", (j) => o.interactive && o.onMove({ heap: i, take: 0, leave: [j + 1, size - j - 1] }), o.interactive ? hoverSplit : null));
        } else {
          row.append(stones(size, () => "", (j) => o.interactive && o.onMove({ heap: i, take: size - j }), o.interactive ? hoverTail : null));
        }
      } else {
        row.append(h("div", { class: "big-heap" }, `${size} stones`));
      }
      // Heaps of 1 and 2 cannot be split unequally: no form for them.
      const splits = kind === "lasker" || (kind === "grundy" && size >= 3);
      if (o.interactive && (size > MAX_STONES || splits)) row.append(heapForm(i, size, kind, o));
      el.append(row);
    });
    if (o.interactive && heaps.some(({ rule }) => ruleKind(rule) === "octal")) {
      el.append(h("p", { class: "tip" }, "Click the first and the last stone to take; the stones on either side stay as heaps."));
    }
    if (o.interactive && heaps.some(({ rule }) => ruleKind(rule) === "grundy")) {
      el.append(h("p", { class: "tip" }, "Click a stone to split its heap after it: the two heaps must be unequal."));
    }
  };
  render();
  return el;
}

/// The typed form under a heap: an amount (large heaps) and, where the rule
/// splits, the two heaps to leave.
function heapForm(i, size, kind, o) {
  const take = numberInput(size, "take");
  const a = numberInput(size, "leave a");
  const b = numberInput(size, "leave b");
  const form = h("form", { class: "heap-form", onsubmit: (e) => {
    e.preventDefault();
    const k = Number(take.value || 0);
    const mv = { heap: i, take: k };
    if (kind !== "take" && (a.value || b.value)) mv.leave = [Number(a.value || 0), Number(b.value || 0)].filter((x) => x > 0);
    if (kind === "lasker" && k === 0 && mv.leave && mv.leave.length === 1) mv.leave.push(0);
    o.onMove(mv);
  } });
  if (kind === "lasker" || kind === "grundy") {
    form.append(h("span", {}, "split into"), a, h("span", {}, "+"), b,
      h("button", { type: "submit", onclick: () => { take.value = "0"; } }, "Split"));
    if (size > MAX_STONES) form.prepend(take);
    return form;
  }
  form.append(take);
  if (kind === "octal") form.append(h("span", {}, "leave"), a, h("span", {}, "+"), b);
  form.append(h("button", { type: "submit" }, "Take"));
  return form;
}

function wythoffBoard(view, o) {
  const [a, b] = view.heaps;
  const el = h("div", { class: "wythoff" });
  el.append(h("p", { class: "tip" }, `Heap A ${a}, heap B ${b}. Take from one heap, or the same from both.`));
  if (Math.max(a, b) <= 25) {
    // The queen on a board: it moves left, down, or diagonally towards the corner.
    const grid = h("div", { class: "queen-grid", style: `--cols:${a + 1}` });
    for (let y = b; y >= 0; y--) {
      for (let x = 0; x <= a; x++) {
        const queen = x === a && y === b;
        const reachable = !queen && ((x === a && y < b) || (y === b && x < a) || (a - x === b - y && x < a));
        grid.append(h("button", {
          type: "button",
          class: `square${queen ? " queen" : ""}${reachable ? " reach" : ""}${(x + y) % 2 ? " dark" : ""}`,
          "aria-label": `A ${x}, B ${y}`,
          dataset: { x, y },
          onclick: () => o.interactive && !queen && o.onMove({ take: [a - x, b - y] }),
        }, queen ? "♛" : ""));
      }
    }
    el.append(grid, h("p", { class: "axis" }, "→ heap A · ↑ heap B · the corner is (0, 0)"));
  } else {
    el.append(h("div", { class: "big-heap" }, `A: ${a}`), h("div", { class: "big-heap" }, `B: ${b}`));
  }
  if (o.interactive) {
    const amount = numberInput(Math.max(a, b), "amount");
    const pick = h("select", { "aria-label": "from" }, h("option", { value: "a" }, "from A"),
      h("option", { value: "b" }, "from B"), h("option", { value: "both" }, "from both"));
    el.append(h("form", { class: "heap-form", onsubmit: (e) => {
      e.preventDefault();
      const k = Number(amount.value || 0);
      o.onMove({ take: pick.value === "a" ? [k, 0] : pick.value === "b" ? [0, k] : [k, k] });
    } }, h("span", {}, "take"), amount, pick, h("button", { type: "submit" }, "Take")));
  }
  return el;
}

function mooreBoard(view, o) {
  const heaps = heapsOf(view);
  const k = view.k;
  const chosen = new Map(); // heap -> amount
  const el = h("div", { class: "heaps" });
  const play = h("button", { type: "button", class: "primary", onclick: () => {
    if (chosen.size) o.onMove({ take: [...chosen.entries()].sort((x, y) => x[0] - y[0]) });
  } }, "Play");
  const render = () => {
    el.replaceChildren(h("p", { class: "tip" },
      `Take from 1 to ${k} heaps at once${view.max_take ? `, at most ${view.max_take} from each` : ""}. Choose, then Play.`));
    heaps.forEach(({ size }, i) => {
      const take = chosen.get(i) || 0;
      const row = h("div", { class: `heap-row${chosen.has(i) ? " chosen" : ""}`, dataset: { heap: i } },
        h("div", { class: "heap-label" }, h("span", { class: "heap-index" }, `heap ${i}`), h("span", { class: "heap-size" }, size)));
      if (size <= MAX_STONES) {
        row.append(stones(size, (j) => (take && j >= size - take ? "selected" : ""), (j) => {
          if (!o.interactive) return;
          const amount = size - j;
          if (chosen.get(i) === amount) chosen.delete(i); else chosen.set(i, amount);
          render();
        }, o.interactive ? hoverTail : null));
      } else {
        row.append(h("div", { class: "big-heap" }, `${size} stones`));
        if (o.interactive) {
          const input = numberInput(size, "take");
          input.value = take || "";
          input.addEventListener("change", () => {
            const v = Number(input.value || 0);
            if (v > 0) chosen.set(i, v); else chosen.delete(i);
          });
          row.append(input);
        }
      }
      el.append(row);
    });
    if (o.interactive) el.append(h("div", { class: "actions" }, play,
      h("span", { class: "tip" }, chosen.size ? [...chosen].map(([i, a]) => `${a} from heap ${i}`).join(", ") : "nothing chosen")));
  };
  render();
  return el;
}

function newStoneBoard(view, o) {
  const heaps = heapsOf(view);
  const el = h("div", { class: "heaps" });
  let pick = null; // {heap, take}
  const render = () => {
    el.replaceChildren(h("p", { class: "tip" },
      "Remove stones from one heap; you may then move some of the removed stones onto other non-empty heaps."));
    const gives = new Map();
    heaps.forEach(({ size }, i) => {
      const row = h("div", { class: `heap-row${pick && pick.heap === i ? " chosen" : ""}`, dataset: { heap: i } },
        h("div", { class: "heap-label" }, h("span", { class: "heap-index" }, `heap ${i}`), h("span", { class: "heap-size" }, size)));
      if (size <= MAX_STONES) {
        row.append(stones(size, (j) => (pick && pick.heap === i && j >= size - pick.take ? "selected" : ""), (j) => {
          if (!o.interactive) return;
          pick = { heap: i, take: size - j };
          render();
        }, o.interactive ? hoverTail : null));
      } else {
        row.append(h("div", { class: "big-heap" }, `${size} stones`));
      }
      if (o.interactive && pick && pick.heap !== i && size > 0) {
        const give = numberInput(pick.take, `give to heap ${i}`);
        gives.set(i, give);
        row.append(h("label", { class: "give" }, "move here ", give));
      }
      el.append(row);
    });
    if (o.interactive) {
      el.append(h("div", { class: "actions" }, h("button", { type: "button", class: "primary", disabled: !pick, onclick: () => {
        const give = [...gives].map(([j, input]) => [j, Number(input.value || 0)]).filter(([, a]) => a > 0);
        o.onMove(give.length ? { heap: pick.heap, take: pick.take, give } : { heap: pick.heap, take: pick.take });
      } }, pick ? `Take ${pick.take} from heap ${pick.heap}` : "Choose stones")));
    }
  };
  render();
  return el;
}

function staircaseBoard(view, o) {
  const pieces = [...view.pieces].sort((a, b) => a - b);
  const top = pieces.length ? pieces[pieces.length - 1] : 0;
  const el = h("div", { class: "staircase" });
  let chosen = null;
  const lastTo = o.last && o.last.to;
  if (top > 80) {
    el.append(h("p", {}, `Pieces on cells ${pieces.join(", ")}.`));
  } else {
    const render = () => {
      el.replaceChildren(h("p", { class: "tip" }, "Move a piece down (left) to an empty cell without jumping over another; cell 0 is off the staircase."));
      const row = h("div", { class: "steps" });
      for (let c = 0; c <= top; c++) {
        const has = pieces.includes(c);
        const below = chosen != null && c < chosen && !pieces.some((p) => p >= c && p < chosen);
        row.append(h("button", {
          type: "button",
          class: `step${has ? " piece" : ""}${c === chosen ? " selected" : ""}${below ? " reach" : ""}${c === lastTo ? " last" : ""}`,
          style: `--height:${c}`,
          dataset: { cell: c },
          "aria-label": `cell ${c}${has ? " (piece)" : ""}`,
          onclick: () => {
            if (!o.interactive) return;
            if (has && c > 0) { chosen = chosen === c ? null : c; render(); return; }
            if (chosen != null) { const from = chosen; chosen = null; o.onMove({ from, to: c }); }
          },
        }, h("span", { class: "cell-no" }, c), has ? h("span", { class: "token" }, "●") : ""));
      }
      el.append(row);
    };
    render();
  }
  return el;
}

function treblecrossBoard(view, o) {
  const cells = view.board != null ? [...view.board] : Array(view.length).fill(".");
  const el = h("div", { class: "strip" });
  const last = o.last && o.last.cell;
  cells.forEach((c, i) => {
    el.append(h("button", {
      type: "button",
      class: `cell${c === "X" ? " x" : ""}${i === last ? " last" : ""}`,
      dataset: { cell: i },
      "aria-label": `cell ${i}${c === "X" ? " (X)" : ""}`,
      disabled: c === "X" && o.interactive ? true : null,
      onclick: () => o.interactive && c !== "X" && o.onMove({ cell: i }),
    }, c === "X" ? "X" : h("span", { class: "cell-no" }, i)));
  });
  return h("div", {}, h("p", { class: "tip" }, "Put an X on an empty cell; whoever makes three in a row wins."), el);
}

function darkraftBoard(view, o) {
  const rows = view.grid;
  const cols = rows[0] ? rows[0].length : 0;
  const el = h("div", { class: "darkraft", style: `--cols:${cols}` });
  const last = o.last;
  rows.forEach((row, r) => [...row].forEach((ch, c) => {
    const active = ch !== ".";
    el.append(h("button", {
      type: "button",
      class: `dcell${active ? ` on ${ch}` : " off"}${last && last.row === r && last.col === c ? " last" : ""}`,
      dataset: { row: r, col: c },
      "aria-label": `row ${r}, column ${c}: ${active ? ch : "inactive"}`,
      onclick: () => o.interactive && active && o.onMove({ row: r, col: c }),
    }, active ? ch : ""));
  }));
  return h("div", {}, h("p", { class: "tip" },
    "Choose an active cell: it and its diagonal(s) go dark (L: ↙↗, R: ↖↘, X: both), up to a dark cell or the edge."), el);
}

/// Coin-turning games: coins heads (H) or tails (T), in a row or on a
/// rectangle. A tap selects or unselects a coin (big enough to hit on a
/// phone); "Turn" sends the selection as the move, and the server says why
/// when the rule does not allow it. In Turning Corners two opposite corners
/// are enough: "Turn" adds the other two.
function coinsBoard(view, o) {
  const rule = view.game === "coins" ? view.rule : view.game;
  const grid = rule === "turning-corners";
  const rows = grid ? view.coins : [view.coins];
  const cols = rows[0] ? rows[0].length : 0;
  const key = (r, c) => (grid ? `${r},${c}` : `${c}`);
  const lastTurned = new Set(((o.last && o.last.turn) || []).map((c) => (Array.isArray(c) ? key(c[0], c[1]) : key(0, c))));
  const selected = new Map();
  const turn = h("button", { type: "button", class: "turn-coins", disabled: true, onclick: () => {
    let coins = [...selected.values()];
    if (grid && coins.length === 2) {
      const [[r1, c1], [r2, c2]] = coins;
      if (r1 !== r2 && c1 !== c2) coins = [[r1, c1], [r1, c2], [r2, c1], [r2, c2]];
    }
    o.onMove({ turn: coins });
  } }, "Turn");
  const clear = h("button", { type: "button", class: "secondary", disabled: true, onclick: () => {
    selected.clear();
    for (const b of el.querySelectorAll(".coin.selected")) b.classList.remove("selected");
    update();
  } }, "Clear");
  const update = () => {
    turn.disabled = selected.size === 0;
    clear.disabled = selected.size === 0;
    turn.textContent = selected.size ? `Turn ${selected.size}` : "Turn";
  };
  const el = h("div", { class: grid ? "coin-grid" : "coin-row", style: `--cols:${cols}` });
  rows.forEach((row, r) => [...row].forEach((ch, c) => {
    const heads = ch === "H";
    const k = key(r, c);
    el.append(h("button", {
      type: "button",
      class: `coin ${heads ? "heads" : "tails"}${lastTurned.has(k) ? " last" : ""}`,
      dataset: grid ? { row: r, col: c } : { coin: c },
      "aria-label": `${grid ? `coin row ${r}, column ${c}` : `coin ${c}`}: ${heads ? "heads" : "tails"}`,
      "aria-pressed": "false",
      onclick: (e) => {
        if (!o.interactive) return;
        const b = e.currentTarget;
        if (selected.has(k)) selected.delete(k); else selected.set(k, grid ? [r, c] : c);
        b.classList.toggle("selected", selected.has(k));
        b.setAttribute("aria-pressed", String(selected.has(k)));
        update();
      },
    }, heads ? "H" : "T", h("span", { class: "coin-no" }, grid ? `${r},${c}` : c)));
  }));
  const tips = {
    "mock-turtles": "Select one, two or three coins, the rightmost heads, and press Turn: each turns over.",
    ruler: "Select a run of consecutive coins, the rightmost heads, and press Turn: each turns over.",
    "turning-corners": "Select two opposite corners of a rectangle, the lower right one heads, and press Turn: its four corners turn over.",
  };
  const parts = [h("p", { class: "tip" }, tips[rule] || ""), el];
  if (o.interactive) parts.push(h("div", { class: "coin-actions" }, turn, clear));
  return h("div", {}, parts);
}

/// Vertices in layers by their longest path from a source, edges as arrows,
/// tokens as numbered discs. Click a token, then a vertex an edge leads to.
function graphBoard(view, o) {
  const n = view.vertices;
  const out = Array.from({ length: n }, () => []);
  for (const [a, b] of view.edges) out[a].push(b);
  const el = h("div", { class: "graph" });
  let chosen = null;
  if (n > 150) {
    el.append(h("p", {}, `A graph of ${n} vertices: too large to draw. Moves:`));
    view.tokens.forEach((v, t) => el.append(h("div", { class: "token-row" }, `token ${t} on ${v}: `,
      out[v].slice(0, 50).map((w) => h("button", { type: "button", onclick: () => o.interactive && o.onMove({ token: t, to: w }) }, `→ ${w}`)))));
    return el;
  }
  const layer = new Array(n).fill(0);
  for (let v = 0; v < n; v++) for (const w of out[v]) layer[w] = Math.max(layer[w], layer[v] + 1); // edges go lower → higher in random graphs
  // A general DAG: relax until stable (at most n passes).
  for (let pass = 0, changed = true; changed && pass < n; pass++) {
    changed = false;
    for (let v = 0; v < n; v++) for (const w of out[v]) if (layer[w] < layer[v] + 1) { layer[w] = layer[v] + 1; changed = true; }
  }
  const layers = [];
  layer.forEach((l, v) => (layers[l] = layers[l] || []).push(v));
  const W = 90, H = 70;
  const pos = [];
  const width = Math.max(...layers.map((l) => (l ? l.length : 0)), 1) * W;
  layers.forEach((vs, l) => vs && vs.forEach((v, i) => {
    pos[v] = [((i + 0.5) * width) / vs.length, 40 + l * H];
  }));
  const height = 40 + layers.length * H;
  const render = () => {
    const svg = h("svg", { viewBox: `0 0 ${width} ${height}`, class: "graph-svg", role: "img", "aria-label": "the graph" },
      h("defs", {}, h("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 22, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
        h("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow" }))));
    const targets = chosen != null ? new Set(out[view.tokens[chosen]]) : new Set();
    for (const [a, b] of view.edges) {
      svg.append(h("line", { x1: pos[a][0], y1: pos[a][1], x2: pos[b][0], y2: pos[b][1], class: "edge", "marker-end": "url(#arrow)" }));
    }
    for (let v = 0; v < n; v++) {
      const [x, y] = pos[v];
      const reach = targets.has(v);
      svg.append(h("g", { class: `vertex${reach ? " reach" : ""}${o.last && o.last.to === v ? " last" : ""}`, dataset: { vertex: v },
        onclick: () => {
          if (!o.interactive || chosen == null || !reach) return;
          const t = chosen; chosen = null; o.onMove({ token: t, to: v });
        } },
        h("circle", { cx: x, cy: y, r: 16 }), h("text", { x, y: y + 5, "text-anchor": "middle" }, v)));
    }
    // Tokens: discs beside their vertex, several on one vertex side by side.
    const onVertex = new Map();
    view.tokens.forEach((v, t) => {
      const k = onVertex.get(v) || 0;
      onVertex.set(v, k + 1);
      const [x, y] = pos[v];
      const cx = x + 18 + k * 16, cy = y - 16;
      svg.append(h("g", { class: `token${chosen === t ? " selected" : ""}`, dataset: { token: t },
        onclick: () => { if (!o.interactive) return; chosen = chosen === t ? null : t; render(); } },
        h("circle", { cx, cy, r: 9 }), h("text", { x: cx, y: cy + 4, "text-anchor": "middle" }, t)));
    });
    el.replaceChildren(h("p", { class: "tip" }, "Click a token, then a vertex one of its vertex's arrows leads to."), svg);
  };
  render();
  return el;
}

function twistBoard(view, o) {
  const m = view.stones;
  const input = h("input", { type: "text", class: "split", placeholder: `e.g. ${Math.ceil(m / 2)}+${Math.floor(m / 2)}`, "aria-label": "split" });
  const el = h("div", { class: "twist" },
    h("p", { class: "tip" }, `${m} stones. The first player splits them into heaps; then it is Nim, the other player moving first.`));
  if (m <= MAX_STONES * 2) el.append(h("div", { class: "stones" }, Array.from({ length: m }, () => h("span", { class: "stone still" }))));
  else el.append(h("div", { class: "big-heap" }, `${m} stones`));
  if (o.interactive) {
    el.append(h("form", { class: "heap-form", onsubmit: (e) => {
      e.preventDefault();
      const parts = input.value.split(/[+\s,]+/).filter(Boolean).map(Number);
      o.onMove({ split: parts });
    } }, h("span", {}, "split into"), input, h("button", { type: "submit" }, "Split")));
  }
  return el;
}

/// A sum: every part drawn by its own board, under its number and name; a
/// click in part i is the move {part: i, move}. The last move is marked in
/// its own part.
function sumBoard(view, o) {
  return h("div", { class: "sum-parts" }, view.parts.map((part, i) => {
    const last = o.last && o.last.part === i ? o.last.move : null;
    const inner = board(part, { ...o, last, onMove: (move) => o.onMove({ part: i, move }) });
    return h("section", { class: `part${last ? " last" : ""}`, dataset: { part: i } },
      h("h3", { class: "part-title" }, `part ${i} · ${specName(part)}`,
        finished(part) ? h("span", { class: "muted" }, " · finished: no move left") : ""), inner);
  }));
}

/// Whether a part is over, for the parts whose end shows in their view: no
/// stone left in any heap, every Darkraft cell inactive, no coin that can
/// go from heads to tails. (Other parts' ends are the server's to tell: a
/// move there is refused with the reason.)
function finished(view) {
  if (view.heaps && (view.game === "nim" || view.game === "wythoff")) return heapsOf(view).every((x) => x.size === 0);
  if (view.grid) return view.grid.every((row) => /^\.*$/.test(row));
  if (view.game === "mock-turtles" || view.game === "ruler") return !view.coins.includes("H");
  // Turning Corners: a head in row 0 or column 0 is no rectangle's far corner.
  if (view.game === "turning-corners") return view.coins.every((row, r) => r === 0 || !row.slice(1).includes("H"));
  return false;
}

