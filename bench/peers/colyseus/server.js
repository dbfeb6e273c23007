'use strict';
// A Colyseus 0.18 server with one room type, "nim": two players, Nim from
// heaps [4,5,5,6] (normal play: who takes the last stone wins), the state
// synchronised with @colyseus/schema, in memory (the default presence and
// matchmaking driver). After a game, each player asks for a rematch and the
// room resets its state for a new game (same room, same connections).
//
// Turn-based: patchRate is null (no 50-ms patch tick); the room broadcasts
// the patch as soon as a move (or a rematch) changes the state.
//
//   NODE_PATH=<dir>/node_modules node bench/peers/colyseus/server.js [--port P]

const { Server, Room } = require('@colyseus/core');
const { WebSocketTransport } = require('@colyseus/ws-transport');
const { schema, t } = require('@colyseus/schema');

const START = [4, 5, 5, 6];

const NimState = schema({
  heaps: t.array('uint8'),
  // Seat (0 or 1) of the player on turn; the winner's seat, -1 while playing.
  turn: t.uint8(),
  winner: t.int8(),
  // Moves played in this game, and the game's number in this room.
  moves: t.uint16(),
  game: t.uint32(),
}, 'NimState');

class NimRoom extends Room {
  onCreate() {
    this.maxClients = 2;
    this.patchRate = null;
    this.seats = [];
    this.rematch = [false, false];
    this.state = new NimState({ heaps: START.slice(), turn: 0, winner: -1, moves: 0, game: 1 });

    this.onMessage('move', (client, m) => {
      const seat = this.seats.indexOf(client.sessionId);
      const s = this.state;
      const heap = m && m.heap;
      const take = m && m.take;
      if (s.winner !== -1) return refuse(client, 'game_over');
      if (seat !== s.turn || this.seats.length < 2) return refuse(client, 'not_your_turn');
      if (!Number.isInteger(heap) || heap < 0 || heap >= s.heaps.length
        || !Number.isInteger(take) || take < 1 || take > s.heaps[heap]) {
        return refuse(client, 'illegal_move');
      }
      s.heaps[heap] -= take;
      s.moves += 1;
      if (s.heaps.every((h) => h === 0)) s.winner = seat;
      else s.turn = 1 - seat;
      this.broadcastPatch();
    });

    this.onMessage('rematch', (client) => {
      const seat = this.seats.indexOf(client.sessionId);
      if (this.state.winner === -1 || seat < 0) return refuse(client, 'game_not_over');
      this.rematch[seat] = true;
      if (this.rematch[0] && this.rematch[1]) {
        const s = this.state;
        for (let h = 0; h < START.length; h++) s.heaps[h] = START[h];
        s.turn = 0;
        s.winner = -1;
        s.moves = 0;
        s.game += 1;
        this.rematch = [false, false];
        this.broadcastPatch();
      }
    });
  }

  onJoin(client) {
    this.seats.push(client.sessionId);
  }

  onLeave(client) {
    const seat = this.seats.indexOf(client.sessionId);
    if (seat >= 0) this.seats.splice(seat, 1);
  }
}

function refuse(client, code) {
  client.send('error', { code });
}

const portAt = process.argv.indexOf('--port');
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : 17893;

const server = new Server({ transport: new WebSocketTransport(), greet: false });
server.define('nim', NimRoom);
server.listen(port, '127.0.0.1').then(() => console.log(`colyseus: listening on 127.0.0.1:${port}`));
