#!/usr/bin/env python3
"""A Grundy bot that plays a uniformly random legal move, for every game.

Written from docs/protocol.md (and docs/games.md for the rules) alone, as the
proof that a third-party bot needs nothing else. One dependency: `websockets`.

    python3 random_bot.py --random kayles --bot perfect
    python3 random_bot.py --spec '{"game": "nim", "heaps": [3, 4, 5]}'
    python3 random_bot.py --join 6GPLJV
    GRUNDY_TOKEN=grundy_... python3 random_bot.py --random nim   # as an account

Exit status: 0 when the match ended with a result and no move was refused,
2 when a move was refused (or our model of the position disagreed with the
server's), 1 on any other failure.
"""
import argparse
import asyncio
import json
import os
import random
import ssl
import sys
from math import comb

try:  # websockets >= 13: the asyncio client API
    from websockets.asyncio.client import connect
except ImportError:  # older releases
    from websockets import connect
from websockets.exceptions import ConnectionClosed


def tls_options(server, ca_cert):
    """What `connect` needs for a wss:// server: the system's roots, and with
    ca_cert (a PEM file) a private CA's as well. Nothing for ws://."""
    if not server.startswith("wss://"):
        return {}
    context = ssl.create_default_context()
    if ca_cert:
        context.load_verify_locations(cafile=ca_cert)
    return {"ssl": context}

# ---------------------------------------------------------------- the games
# Each model turns the legal moves of its position into "parts": a list of
# (count, f) where f(i) gives the i-th move of the part, 0 <= i < count.
# pick() draws one index over all parts, so every legal move is equally likely.


def pick(rng, parts):
    total = sum(count for count, _ in parts)
    if total == 0:
        return None
    i = rng.randrange(total)
    for count, f in parts:
        if i < count:
            return f(i)
        i -= count


def sample_distinct(rng, n, k):
    """k distinct sorted numbers of range(n), uniformly (n may be huge)."""
    if n <= 1_000_000:
        return sorted(rng.sample(range(n), k))
    chosen = set()
    while len(chosen) < k:
        chosen.add(rng.randrange(n))
    return sorted(chosen)


def parse_rule(rule):
    """A heap RULE of the spec, as a hashable tuple."""
    if isinstance(rule, str):
        return (rule,)  # "any", "odd", "half", "lasker"
    (kind, arg), = rule.items()
    if kind == "set":
        return ("set", tuple(sorted(set(arg))))
    if kind == "octal":  # "0.77": digit k says what removing k tokens may leave
        before, _, after = arg.partition(".")
        return ("octal", tuple(int(d, 8) for d in (before + after).rstrip("0")))
    return (kind, arg)  # ("upto", k)


def heap_parts(n, rule):
    """The moves on one heap of size n, as parts of (take, leave) pairs."""
    kind = rule[0]
    if n == 0:
        return []
    if kind == "any":
        return [(n, lambda i: (i + 1, None))]
    if kind == "upto":
        return [(min(n, rule[1]), lambda i: (i + 1, None))]
    if kind == "set":
        amounts = [s for s in rule[1] if s <= n]
        return [(len(amounts), lambda i: (amounts[i], None))]
    if kind == "odd":
        return [((n + 1) // 2, lambda i: (2 * i + 1, None))]
    if kind == "half":  # take at least ceil(n/2)
        low = (n + 1) // 2
        return [(n - low + 1, lambda i: (low + i, None))]
    if kind == "lasker":  # take any, or split without taking
        return [(n, lambda i: (i + 1, None)), (n - 1, lambda i: (0, [i + 1, n - 1 - i]))]
    if kind == "octal":
        parts = []
        for k, digit in enumerate(rule[1]):
            rest = n - k
            if rest < 0:
                break
            if digit & 1 and rest == 0:  # take the whole heap
                parts.append((1, lambda i, k=k: (k, None)))
            if digit & 2 and k > 0 and rest > 0:  # leave one heap
                parts.append((1, lambda i, k=k: (k, None)))
            if digit & 4 and rest >= 2:  # leave two non-empty heaps
                parts.append((rest - 1, lambda i, k=k, r=rest: (k, [i + 1, r - 1 - i])))
        return parts
    raise ValueError(f"unknown heap rule {rule}")


class Model:
    """A position: parts(rng) gives its legal moves, apply(move) plays one."""

    def __eq__(self, other):
        return type(self) is type(other) and vars(self) == vars(other)


class Heaps(Model):
    """nim (and misère), heaps and its presets: bash, subtraction, kayles, dawson, lasker."""

    def __init__(self, heaps, misere=False):
        self.heaps = heaps  # list of [size, rule]
        self.misere = misere

    def parts(self, rng):
        parts = []
        for h, (n, rule) in enumerate(self.heaps):
            for count, f in heap_parts(n, rule):
                parts.append((count, lambda i, h=h, f=f: self._move(h, *f(i))))
        return parts

    @staticmethod
    def _move(h, take, leave):
        return {"heap": h, "take": take} if leave is None else {"heap": h, "take": take, "leave": leave}

    def apply(self, move):
        h, take, leave = move["heap"], move["take"], move.get("leave")
        size, rule = self.heaps[h]
        if leave is None or len(leave) == 1:
            self.heaps[h][0] = size - take
        elif not leave:
            self.heaps[h][0] = 0
        else:  # a takes the place of the heap, b is inserted right after it
            self.heaps[h:h + 1] = [[leave[0], rule], [leave[1], rule]]


class Wythoff(Model):
    def __init__(self, heaps):
        self.a, self.b = heaps

    def parts(self, rng):
        return [(self.a, lambda i: {"take": [i + 1, 0]}),
                (self.b, lambda i: {"take": [0, i + 1]}),
                (min(self.a, self.b), lambda i: {"take": [i + 1, i + 1]})]

    def apply(self, move):
        x, y = move["take"]
        self.a, self.b = self.a - x, self.b - y


class Moore(Model):
    """Take from 1..k heaps at once, at most max_take from each."""

    def __init__(self, heaps, k, max_take=None):
        self.heaps, self.k, self.max_take = heaps, k, max_take

    def parts(self, rng):
        c = [min(h, self.max_take) if self.max_take else h for h in self.heaps]
        n, k = len(c), min(self.k, len(c))
        # ways[i][r]: the ways to take from at most r of the heaps i.. (none included)
        ways = [[1] * (k + 1) for _ in range(n + 1)]
        for i in range(n - 1, -1, -1):
            for r in range(k + 1):
                ways[i][r] = ways[i + 1][r] + (c[i] * ways[i + 1][r - 1] if r else 0)

        def nth(j):  # skipping every heap is index 0: shift past it
            j, r, take = j + 1, k, []
            for i in range(n):
                if j < ways[i + 1][r]:
                    continue  # heap i not chosen
                j -= ways[i + 1][r]
                sub = ways[i + 1][r - 1]
                take.append([i, j // sub + 1])
                j, r = j % sub, r - 1
            return {"take": take}

        return [(ways[0][k] - 1, nth)]

    def apply(self, move):
        for h, amount in move["take"]:
            self.heaps[h] -= amount


class NewStone(Model):
    """Remove >= 1 from a heap, then move some of its rest onto other non-empty heaps."""

    def __init__(self, heaps):
        self.heaps = heaps

    def parts(self, rng):
        full = [i for i, h in enumerate(self.heaps) if h > 0]
        m = len(full) - 1  # the other non-empty heaps
        # A move from heap i: k - 1, a gift per other heap and the stones kept are
        # m + 2 numbers >= 0 summing to h - 1: C(h + m, m + 1) moves (stars and bars).
        return [(comb(self.heaps[i] + m, m + 1), lambda _, i=i: self._draw(rng, i, full, m))
                for i in full]

    def _draw(self, rng, i, full, m):
        bars = sample_distinct(rng, self.heaps[i] + m, m + 1)
        sizes = [b - a - 1 for a, b in zip([-1] + bars, bars)]  # first m + 1 numbers
        others = [j for j in full if j != i]
        give = [[j, g] for j, g in zip(others, sizes[1:]) if g > 0]
        return {"heap": i, "take": sizes[0] + 1, "give": give}

    def apply(self, move):
        self.heaps[move["heap"]] -= move["take"]
        for j, amount in move.get("give") or []:
            self.heaps[move["heap"]] -= amount
            self.heaps[j] += amount


class Staircase(Model):
    def __init__(self, pieces):
        self.pieces = sorted(pieces)

    def parts(self, rng):
        lows = [0] + self.pieces[:-1]  # a piece may go down to the cell after its left neighbour
        return [(c - low - 1, lambda i, c=c, low=low: {"from": c, "to": low + 1 + i})
                for c, low in zip(self.pieces, lows)]

    def apply(self, move):
        self.pieces = sorted(move["to"] if c == move["from"] else c for c in self.pieces)


class Treblecross(Model):
    def __init__(self, board):
        self.board = list(board)

    def parts(self, rng):
        empty = [i for i, cell in enumerate(self.board) if cell == "."]
        return [(len(empty), lambda i: {"cell": empty[i]})]

    def apply(self, move):
        self.board[move["cell"]] = "X"


class Darkraft(Model):
    DIAGONALS = {"L": [(1, -1), (-1, 1)], "R": [(-1, -1), (1, 1)]}
    DIAGONALS["X"] = DIAGONALS["L"] + DIAGONALS["R"]

    def __init__(self, grid):  # grid: rows of L, R, X; any other letter is an inactive cell
        self.grid = [list(row) for row in grid]

    def active(self, r, c):
        return 0 <= r < len(self.grid) and 0 <= c < len(self.grid[r]) and self.grid[r][c] in "LRX"

    def parts(self, rng):
        cells = [(r, c) for r, row in enumerate(self.grid) for c in range(len(row)) if self.active(r, c)]
        return [(len(cells), lambda i: {"row": cells[i][0], "col": cells[i][1]})]

    def apply(self, move):
        r, c = move["row"], move["col"]
        for dr, dc in self.DIAGONALS[self.grid[r][c]]:
            y, x = r + dr, c + dc
            while self.active(y, x):
                self.grid[y][x] = "."
                y, x = y + dr, x + dc
        self.grid[r][c] = "."


class Twist(Model):
    """Seat 0 first splits the stones into non-empty heaps; then Nim."""

    MAX_HEAPS = 10_000

    def __init__(self, stones):
        self.stones = stones

    def parts(self, rng):
        m = self.stones
        if m - 1 < self.MAX_HEAPS:  # every gap between two stones is cut or not
            return [(2 ** (m - 1), lambda i: {"split": self._split([j + 1 for j in range(m - 1) if i >> j & 1])})]
        # Too many stones: choose the number of cuts weighted by C(m - 1, cuts).
        weights, w = [], 1
        for cuts in range(self.MAX_HEAPS):
            weights.append((w, lambda i, cuts=cuts: {"split": self._split(
                [1 + x for x in sample_distinct(rng, m - 1, cuts)])}))
            w = w * (m - 1 - cuts) // (cuts + 1)
        return weights

    def _split(self, cuts):
        edges = [0] + sorted(cuts) + [self.stones]
        return [b - a for a, b in zip(edges, edges[1:])]

    def apply(self, move):
        raise AssertionError("replaced by a Heaps model: see Match.apply")


class Graph(Model):
    def __init__(self, vertices, edges, tokens):
        self.succ = [set() for _ in range(vertices)]
        for a, b in edges:
            self.succ[a].add(b)
        self.succ = [sorted(s) for s in self.succ]
        self.tokens = list(tokens)

    def parts(self, rng):
        return [(len(self.succ[v]), lambda i, t=t, v=v: {"token": t, "to": self.succ[v][i]})
                for t, v in enumerate(self.tokens)]

    def apply(self, move):
        self.tokens[move["token"]] = move["to"]


OCTAL = {"kayles": "0.77", "dawson": "0.07"}


def model_from_spec(spec):
    """The model of the position a spec (or a `position` view) describes."""
    game = spec["game"]
    if game == "nim":
        return Heaps([[n, ("any",)] for n in spec["heaps"]], spec.get("misere") or False)
    if game == "heaps":
        default = parse_rule(spec["rule"]) if spec.get("rule") is not None else None
        return Heaps([[h, default] if isinstance(h, int) else
                      [h["size"], parse_rule(h["rule"]) if h.get("rule") is not None else default]
                      for h in spec["heaps"]])
    if game in ("bash", "subtraction", "kayles", "dawson", "lasker"):
        rule = {"bash": {"upto": spec.get("k")}, "subtraction": {"set": spec.get("set")},
                "lasker": "lasker"}.get(game) or {"octal": OCTAL.get(game)}
        return Heaps([[n, parse_rule(rule)] for n in spec["heaps"]])
    if game == "wythoff":
        return Wythoff(spec["heaps"])
    if game == "moore":
        return Moore(list(spec["heaps"]), spec["k"], spec.get("max_take"))
    if game == "new-stone":
        return NewStone(list(spec["heaps"]))
    if game == "staircase":
        return Staircase(spec["pieces"])
    if game == "treblecross":
        return Treblecross(spec["board"] if spec.get("board") is not None else "." * spec["length"])
    if game == "darkraft":
        return Darkraft(spec["grid"])
    if game == "twist":
        if spec.get("heaps") is not None:  # assumption: the view after the split
            return Heaps([[n, ("any",)] for n in spec["heaps"]])
        return Twist(spec["stones"])
    if game == "graph":
        return Graph(spec["vertices"], spec["edges"], spec["tokens"])
    raise ValueError(f"unknown game {game!r}")


def apply_move(model, move):
    """The model after a move (a new model where the move changes the game)."""
    if isinstance(model, Twist):
        return Heaps([[n, ("any",)] for n in move["split"]])
    model.apply(move)
    return model


# ---------------------------------------------------------------- the client


class Dropped(Exception):
    """The bot closed its own connection (--drop-after) to test resuming."""


class Bot:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.next_id = 0
        self.room = self.token = self.seat = self.model = None
        self.seq = 0  # the last event processed
        self.to_move = None
        self.pending = None  # id of the move in flight
        self.moves_sent = self.refusals = self.warnings = 0
        self.result = None
        self.rate, self.burst = 1.0, 1  # messages per second and burst, until `welcome` tells

    def log(self, text):
        print(text, flush=True)

    async def send(self, msg):
        # Stay within the server's rate limit: a token bucket of `burst` messages,
        # refilled at `messages_per_second` (from `welcome.limits`).
        now = asyncio.get_running_loop().time()
        self.tokens = min(self.burst, self.tokens + (now - self.last_send) * self.rate)
        self.last_send = now
        if self.tokens < 1:
            await asyncio.sleep((1 - self.tokens) / self.rate)
            self.tokens, self.last_send = 1, asyncio.get_running_loop().time()
        self.tokens -= 1
        self.next_id += 1
        msg["id"] = self.next_id
        if self.args.verbose:
            self.log(f"  -> {json.dumps(msg)}")
        await self.ws.send(json.dumps(msg))
        return self.next_id

    async def receive(self):
        msg = json.loads(await self.ws.recv())
        if self.args.verbose:
            self.log(f"  <- {json.dumps(msg)}")
        return msg

    async def request(self, msg):
        """Send a command and wait for its answer, handling what comes meanwhile."""
        want = await self.send(msg)
        while True:
            answer = await self.receive()
            if answer["type"] == "error" and answer["code"] == "rate_limited":
                await asyncio.sleep(answer.get("retry_after_ms", 1000) / 1000)
                want = await self.send(msg)  # it was dropped unread: send it again
            elif answer.get("id") == want:
                if answer["type"] == "error":
                    raise RuntimeError(f"{answer['code']}: {answer['message']}")
                return answer
            else:
                await self.on_message(answer)

    async def run(self):
        for attempt in range(30):
            try:
                tls = tls_options(self.args.server, self.args.ca_cert)
                async with connect(self.args.server, max_size=None, compression=None, **tls) as ws:
                    self.ws, self.tokens, self.last_send = ws, 1, asyncio.get_running_loop().time()
                    # With a personal API token the bot plays as its account
                    # (the name is then the account's); without, as a guest.
                    hello = {"type": "hello", "version": 1}
                    if self.args.token:
                        hello["token"] = self.args.token
                    else:
                        hello["name"] = self.args.name
                    welcome = await self.request(hello)
                    limits = welcome["limits"]
                    self.rate, self.burst = limits["messages_per_second"] * 0.9, limits["burst"] - 1
                    if attempt == 0:
                        who = welcome["name"]
                        if welcome.get("account"):
                            who += f" (account, {welcome['account']['kind']})"
                        self.log(f"connected to {welcome['server']} at {self.args.server} as {who}")
                    if self.token is None:
                        await self.sit()
                    else:
                        await self.resume()
                    while self.result is None:
                        await self.on_message(await self.receive())
                    return
            except (ConnectionClosed, OSError, Dropped) as err:
                if self.result is not None:
                    return
                if self.token is None:  # not seated yet: nothing to come back to
                    raise RuntimeError(f"connection failed: {err}") from err
                self.log(f"connection lost ({type(err).__name__}: {err}); reconnecting")
                self.pending = None
                await asyncio.sleep(min(0.2 * (attempt + 1), 2))
        raise RuntimeError("could not reconnect")

    async def sit(self):
        a = self.args
        if a.join:
            answer = await self.request({"type": "join", "room": a.join})
        else:
            msg = {"type": "create_room", "bot": a.bot}
            if a.spec:
                msg["spec"] = json.loads(a.spec)
            else:
                msg["random"] = {"family": a.random, "seed": self.rng.randrange(2 ** 64), "size": a.size}
            answer = await self.request(msg)
        self.room, self.seat, self.token = answer["room"], answer["seat"], answer["token"]
        snap = answer["snapshot"]
        self.log(f"room {snap['code']} ({self.room}), seat {self.seat}, game {json.dumps(snap['spec'])[:200]}")
        await self.load_snapshot(snap)

    async def resume(self):
        answer = await self.request({"type": "resume", "room": self.room, "token": self.token, "since": self.seq})
        self.log(f"resumed seat {answer['seat']} after event {self.seq}: {len(answer['events'])} missed event(s)")
        for event in answer["events"]:
            await self.on_event(event)
        await self.maybe_move()

    async def load_snapshot(self, snap):
        """The state of a snapshot: the spec, then every move played since."""
        self.model = model_from_spec(snap["spec"])
        for move in snap["moves"]:
            # Each entry is the move itself; accept a whole moved event too.
            self.model = apply_move(self.model, move["move"] if "seat" in move and "move" in move else move)
        self.check(snap["position"])
        self.seq, self.to_move, self.result = snap["seq"], snap["to_move"], snap["result"]
        if self.result is not None:
            self.finish(self.result)
        await self.maybe_move()

    def check(self, position):
        """Compare our model with the server's view of the position, and trust the server."""
        if position is None:
            return
        try:
            theirs = model_from_spec(position)
        except (KeyError, ValueError, TypeError) as err:
            self.warn(f"cannot read the position {json.dumps(position)}: {err!r}")
            return
        if theirs != self.model:
            self.warn(f"our model {vars(self.model)} differs from the server's position {json.dumps(position)}")
            self.model = theirs

    def warn(self, text):
        self.warnings += 1
        self.log(f"WARNING: {text}")

    async def on_message(self, msg):
        kind = msg["type"]
        if kind == "event" and msg["room"] == self.room:
            await self.on_event(msg["event"])
            await self.maybe_move()
        elif kind == "error" and msg.get("id") is not None and msg["id"] == self.pending:
            self.refusals += 1
            self.pending = None
            self.log(f"REFUSED: {msg['code']}: {msg['message']}")
            if self.refusals >= 5:
                raise RuntimeError("too many refused moves")
            snap = (await self.request({"type": "resume", "room": self.room, "token": self.token}))["snapshot"]
            await self.load_snapshot(snap)  # start again from the server's state
        elif kind == "error" and msg["code"] == "rate_limited":  # should not happen: we pace ourselves
            self.log(f"rate limited: {msg['message']}")
            await asyncio.sleep(msg.get("retry_after_ms", 1000) / 1000)
            if self.pending is not None:  # our move was dropped unread: play again
                self.pending = None
                await self.maybe_move()
        elif kind == "error":
            self.log(f"error: {msg['code']}: {msg['message']}")
        elif kind == "shutdown":
            self.log(f"server: {msg['message']}")

    async def on_event(self, event):
        if event["seq"] <= self.seq:
            return  # already seen (a second subscription)
        if event["seq"] != self.seq + 1:
            self.warn(f"missed events {self.seq + 1}..{event['seq'] - 1}")
        self.seq = event["seq"]
        kind = event["kind"]
        if kind == "started":
            self.to_move = 0
        elif kind == "seated" and event["seat"] != self.seat:
            self.log(f"opponent {event['name'] or '(anonymous)'} took seat {event['seat']}")
        elif kind == "moved":
            who = "we" if event["seat"] == self.seat else "they"
            self.log(f"{who} (seat {event['seat']}) played {json.dumps(event['move'])}")
            self.model = apply_move(self.model, event["move"])
            self.check(event["position"])
            self.to_move = 1 - event["seat"]
            if event["seat"] == self.seat:
                self.pending = None
        elif kind == "ended":
            self.finish(event["result"])

    def finish(self, result):
        self.result, self.to_move = result, None
        winner = result["winner"]
        outcome = "no winner" if winner is None else ("we won" if winner == self.seat else "we lost")
        self.log(f"result: winner {winner}, reason {result['reason']} ({outcome})")

    async def maybe_move(self):
        if self.to_move != self.seat or self.pending is not None or self.result is not None:
            return
        if isinstance(self.model, Treblecross) and "XXX" in "".join(self.model.board):
            return  # three in a row: the game is over, its `ended` event follows
        move = pick(self.rng, self.model.parts(self.rng))
        if move is None:
            return  # no legal move: the game is over, its `ended` event follows
        self.pending = await self.send({"type": "move", "room": self.room, "token": self.token, "move": move})
        self.moves_sent += 1
        if self.moves_sent == self.args.drop_after:
            await self.ws.close()  # drop the connection with the move in flight
            raise Dropped(f"closed after {self.moves_sent} move(s), as asked")


def main():
    p = argparse.ArgumentParser(description="A Grundy bot that plays uniformly random legal moves.")
    p.add_argument("--server", default="ws://127.0.0.1:7878", help="server URL (default %(default)s)")
    p.add_argument("--ca-cert", metavar="FILE", default=os.environ.get("GRUNDY_CA_CERT"),
                   help="for a wss:// server with a private CA: its certificate, PEM "
                        "(default: $GRUNDY_CA_CERT)")
    p.add_argument("--name", default="random_bot.py", help="the name shown to others (as a guest)")
    p.add_argument("--token", default=os.environ.get("GRUNDY_TOKEN"),
                   help="a personal API token: play as its account (default: $GRUNDY_TOKEN)")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--spec", help='create a room with this game spec (JSON), e.g. \'{"game":"nim","heaps":[3,4]}\'')
    how.add_argument("--random", metavar="GAME", help="create a room with a random start of GAME (e.g. kayles)")
    how.add_argument("--join", metavar="CODE", help="join the room with this code (or id)")
    p.add_argument("--size", type=int, help="size bound of the random start (default: the server's)")
    p.add_argument("--bot", metavar="LEVEL", help="ask for the server's house bot: perfect, random, or 0-10")
    p.add_argument("--seed", type=int, help="seed of our random choices (and of the random start)")
    p.add_argument("--drop-after", type=int, metavar="N", help="testing: drop the connection after our N-th move")
    p.add_argument("--verbose", "-v", action="store_true", help="print every frame")
    args = p.parse_args()
    bot = Bot(args)
    try:
        asyncio.run(bot.run())
    except (RuntimeError, KeyboardInterrupt) as err:
        print(f"failed: {err}", file=sys.stderr)
        return 1
    if bot.refusals or bot.warnings:
        print(f"{bot.refusals} move(s) refused, {bot.warnings} warning(s)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
