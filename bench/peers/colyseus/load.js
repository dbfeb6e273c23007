'use strict';
// The Nim duel load against the Colyseus server (server.js), driven through
// Colyseus's official client, @colyseus/sdk, as a developer would: player A
// creates a "nim" room, player B joins it by id; each has its own Client and
// its own WebSocket. The state arrives as @colyseus/schema patches; a player
// "sees" a move when onStateChange fires with the state that includes it.
// After 20 moves both players ask for a rematch and wait for the reset state
// of the next game in the same room. See ../harness.js for the measurement.
//
//   NODE_PATH=<dir>/node_modules node bench/peers/colyseus/load.js --port 17893 \
//     --matches 100 --duration 5 --warmup 1 [--server-pid PID] [--workers N]

const harness = require('../harness.js');
const { Client } = require('@colyseus/sdk');

const name = 'colyseus';

function wsUrl(url) {
  return url.replace(/^http/, 'ws');
}

function player(room, run) {
  const watch = run.watch();
  room.onStateChange(() => watch.poke());
  room.onMessage('error', (m) => watch.fail(new Error(`refused: ${m && m.code}`)));
  room.onError((code, message) => watch.fail(new Error(`room error ${code}: ${message}`)));
  room.onDrop((code) => watch.fail(new Error(`connection dropped (${code})`)));
  room.onLeave((code) => watch.fail(new Error(`left the room (${code})`)));
  return { room, watch };
}

async function open(i, run) {
  const url = wsUrl(run.url);
  const ra = await new Client(url).create('nim');
  const rb = await new Client(url).joinById(ra.roomId);
  const pair = [player(ra, run), player(rb, run)];
  // Both have the first state of the game before the clock.
  await Promise.all(pair.map((p) => p.watch.until(() => p.room.state && p.room.state.heaps && p.room.state.heaps.length > 0, 'first state')));
  return pair;
}

async function play(pair, run) {
  const [a] = pair;
  const game = a.room.state.game;
  for (let n = 0; n < harness.NIM_MOVES; n++) {
    if (run.ended()) return false;
    const mover = pair[n % 2];
    const s = mover.room.state;
    if (s.game !== game || s.moves !== n || s.turn !== n % 2) {
      throw new Error(`unexpected state: game ${s.game} move ${s.moves} turn ${s.turn}, expected game ${game} move ${n}`);
    }
    const heap = harness.firstMove(s.heaps);
    const sent = performance.now();
    mover.room.send('move', { heap, take: 1 });
    const seen = (p) => () => p.room.state.game === game && p.room.state.moves === n + 1;
    const [done] = await Promise.all(pair.map((p) => p.watch.until(seen(p), 'state with the move')));
    run.record(sent, done);
  }
  if (a.room.state.winner !== 1) throw new Error(`game over without the expected winner (${a.room.state.winner})`);
  // Rematch in the same room: both ask, both see the reset state.
  for (const p of pair) p.room.send('rematch');
  await Promise.all(pair.map((p) => p.watch.until(() => p.room.state.game === game + 1 && p.room.state.moves === 0, 'rematch')));
  return true;
}

function close(pair) {
  for (const p of pair || []) {
    p.watch.fail(new Error('closed'));
    p.room.removeAllListeners();
    p.room.leave().catch(() => {});
  }
}

harness.main({ name, open, play, close }, 17893);
