'use strict';
// A boardgame.io 0.50 server for Nim (nim.js): boardgame.io's own Server
// (Koa, its lobby REST API and socket.io on one port), with its default
// in-memory storage.
//
// package.json pins koa-compose to 4.1.0 (npm "overrides"): with 4.2.0, which
// npm picks for koa 2.x, compose() copies the middleware list when the
// socket.io layer builds the HTTP server, before the lobby's routes are added,
// and every lobby request gets a 404.
//
//   NODE_PATH=<dir>/node_modules node bench/peers/boardgameio/server.js [--port P]

const { Server, Origins } = require('boardgame.io/server');
const { Nim } = require('./nim.js');

const portAt = process.argv.indexOf('--port');
const port = portAt > 0 ? Number(process.argv[portAt + 1]) : 17892;

// The load's clients are Node processes on loopback (no Origin header);
// browsers on localhost would be let in too.
const server = Server({ games: [Nim], origins: [Origins.LOCALHOST] });
server.run({ port }, () => console.log(`boardgame.io: listening on port ${port}`));
