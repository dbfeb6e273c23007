'use strict';
// Nim for boardgame.io 0.50, shared by server.js and load.js (a boardgame.io
// client needs the game definition too): heaps [4,5,5,6], two players, one
// move per turn, who takes the last stone wins (normal play).
//
// The move is server-only (`client: false`): a client does not apply it
// optimistically, so it sees a move only once the server's state has it,
// which is what the load measures.

const { INVALID_MOVE } = require('boardgame.io/core');

const START = [4, 5, 5, 6];

const Nim = {
  name: 'nim',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ heaps: START.slice() }),
  moves: {
    take: {
      client: false,
      move: ({ G }, heap, count) => {
        if (!Number.isInteger(heap) || heap < 0 || heap >= G.heaps.length
          || !Number.isInteger(count) || count < 1 || count > G.heaps[heap]) {
          return INVALID_MOVE;
        }
        G.heaps[heap] -= count;
      },
    },
  },
  turn: { minMoves: 1, maxMoves: 1 },
  endIf: ({ G, ctx }) => (G.heaps.every((h) => h === 0) ? { winner: ctx.currentPlayer } : undefined),
};

module.exports = { Nim, START };
