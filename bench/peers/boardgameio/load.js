'use strict';
// The Nim duel load against the boardgame.io server (server.js), driven
// through boardgame.io's own client library, as a developer would, headless
// in Node: `LobbyClient` (the lobby REST API: create a match, join it) and
// the vanilla `Client` with the `SocketIO` multiplayer transport, one per
// player, each with its own socket.io connection (WebSocket transport only, no
// long-polling start; no automatic reconnection, so a drop counts as an
// error). A player "sees" a move when the client's subscriber gets the state
// that includes it (the move is `client: false`, so never applied locally
// first). After 20 moves the pair starts a new match through the lobby
// (create, both join) and both clients switch to it on their open
// connections (updateCredentials + updateMatchID, which re-sync).
// See ../harness.js for the measurement.
//
//   NODE_PATH=<dir>/node_modules node bench/peers/boardgameio/load.js --port 17892 \
//     --matches 100 --duration 5 --warmup 1 [--server-pid PID] [--workers N]

const harness = require('../harness.js');
const { Client, LobbyClient } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { Nim } = require('./nim.js');

const name = 'boardgameio';
const START_STONES = 20;

const stones = (state) => state.G.heaps.reduce((a, b) => a + b, 0);

/** Creates a match in the lobby and seats both players; their credentials. */
async function newMatch(lobbies) {
  const { matchID } = await lobbies[0].createMatch('nim', { numPlayers: 2 });
  const joined = await Promise.all(lobbies.map((lobby, seat) =>
    lobby.joinMatch('nim', matchID, { playerID: String(seat), playerName: `p${seat}` })));
  return { matchID, credentials: joined.map((j) => j.playerCredentials) };
}

/** Both clients have the first state of `matchID`. */
function synced(pair, matchID) {
  return Promise.all(pair.map((p) => p.watch.until(() => {
    const s = p.state;
    return s !== null && p.client.matchID === matchID && s.ctx.gameover === undefined && stones(s) === START_STONES;
  }, 'state of the new match')));
}

async function open(i, run) {
  const lobbies = [new LobbyClient({ server: run.url }), new LobbyClient({ server: run.url })];
  const { matchID, credentials } = await newMatch(lobbies);
  const pair = [0, 1].map((seat) => {
    const client = Client({
      game: Nim,
      numPlayers: 2,
      multiplayer: SocketIO({
        server: run.url,
        socketOpts: { transports: ['websocket'], forceNew: true, reconnection: false },
      }),
      matchID,
      playerID: String(seat),
      credentials: credentials[seat],
      debug: false,
    });
    const p = { client, lobby: lobbies[seat], watch: run.watch(), state: null, connected: false };
    client.subscribe((state) => {
      if (state === null) return;
      if (state.isConnected) p.connected = true;
      else if (p.connected) return p.watch.fail(new Error('connection dropped'));
      p.state = state;
      p.watch.poke();
    });
    client.start();
    return p;
  });
  await synced(pair, matchID);
  return pair;
}

async function play(pair, run) {
  const matchID = pair[0].client.matchID;
  for (let n = 0; n < harness.NIM_MOVES; n++) {
    if (run.ended()) return false;
    const mover = pair[n % 2];
    const s = mover.state;
    if (s.ctx.currentPlayer !== String(n % 2) || stones(s) !== START_STONES - n || s.ctx.gameover !== undefined) {
      throw new Error(`unexpected state: player ${s.ctx.currentPlayer} on turn, ${stones(s)} stones, expected move ${n}`);
    }
    const heap = harness.firstMove(s.G.heaps);
    const sent = performance.now();
    mover.client.moves.take(heap, 1);
    const seen = (p) => () => p.client.matchID === matchID && stones(p.state) === START_STONES - n - 1;
    const [done] = await Promise.all(pair.map((p) => p.watch.until(seen(p), 'state with the move')));
    run.record(sent, done);
  }
  const over = pair[0].state.ctx.gameover;
  if (!over || over.winner !== '1') throw new Error(`game over without the expected winner (${JSON.stringify(over)})`);
  // The next match: through the lobby, on the same connections.
  const next = await newMatch(pair.map((p) => p.lobby));
  pair.forEach((p, seat) => {
    p.client.updateCredentials(next.credentials[seat]);
    p.client.updateMatchID(next.matchID);
  });
  await synced(pair, next.matchID);
  return true;
}

function close(pair) {
  for (const p of pair || []) {
    p.watch.fail(new Error('closed'));
    p.client.stop();
  }
}

harness.main({ name, open, play, close }, 17892);
