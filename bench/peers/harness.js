'use strict';
// The measuring half of the peers' load clients, shared by
// boardgameio/load.js and colyseus/load.js: arguments, the clock (warm-up,
// then the measured window), latencies, errors, CPU from /proc, worker
// processes, and the one-line result in the format of `grundy-load run`:
//
//   matches=C moves_per_s=X p50_ms=X p99_ms=X max_ms=X errors=N
//   server_us_per_move=X load_us_per_move=X load_cores=X
//
// The workload is Grundy's "Nim duel load" (docs/performance.md): C matches
// at once, two client connections each; Nim from heaps [4,5,5,6], the player
// on turn takes one stone from the first non-empty heap (20 moves a match);
// one move in flight per match: the mover sends its move and waits until it
// sees the resulting state, the opponent moves once it has seen it too.
// Latency = send -> the mover sees the state with its own move. A move counts
// if it was sent and answered inside the window. Every error, drop,
// unexpected state or 10-s wait counts in `errors`; a run with errors is not a
// result.
//
// A peer module gives:
//   name                      for messages
//   open(i, run)   -> pair    opens match i's two connections (before the clock)
//   play(pair, run) -> bool   plays one match (and readies the next one);
//                             false when the window ended during it
//   close(pair)               closes both connections
// and uses run.ended(), run.record(sent, done), run.watch() (see Watch).

const fs = require('node:fs');
const { fork } = require('node:child_process');
const { performance } = require('node:perf_hooks');

/** Start of every match, and moves per match. */
const NIM_START = [4, 5, 5, 6];
const NIM_MOVES = 20;
/** Longest wait for one answer. */
const STEP_TIMEOUT_MS = 10_000;
/** Connections being opened at once (per process), as in grundy-load. */
const OPENING_AT_ONCE = 64;
/** /proc reports clock ticks of USER_HZ, which is 100 on Linux. */
const US_PER_TICK = 10_000;

function usage(name, defaultPort) {
  return `usage: node ${name}/load.js [--url URL | --port P] [--matches C] [--duration S]
       [--warmup S] [--server-pid PID] [--workers N]
  --url URL         the server (default http://127.0.0.1:${defaultPort}; --port sets the port)
  --matches C       concurrent matches, two connections each (default 1)
  --duration S      seconds measured after the warm-up (default 10)
  --warmup S        seconds played before measuring (default 1)
  --server-pid PID  the server's process: its CPU per move over the window
  --workers N       load processes (default 1); their CPU is summed
Prints one line: matches=C moves_per_s=... p50_ms=... p99_ms=... max_ms=...
errors=... server_us_per_move=... load_us_per_move=... load_cores=...`;
}

function parseArgs(argv, name, defaultPort) {
  const o = {
    url: null, port: defaultPort, matches: 1, duration: 10, warmup: 1,
    serverPid: null, workers: 1,
  };
  const num = (flag, v, min) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`${flag}: not a number >= ${min}: ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '--help' || flag === '-h') {
      console.log(usage(name, defaultPort));
      process.exit(0);
    }
    const v = argv[++i];
    if (v === undefined) throw new Error(`${flag}: needs a value`);
    switch (flag) {
      case '--url': o.url = v.replace(/\/+$/, ''); break;
      case '--port': o.port = num(flag, v, 1); break;
      case '--matches': o.matches = num(flag, v, 1); break;
      case '--duration': o.duration = num(flag, v, 0.001); break;
      case '--warmup': o.warmup = num(flag, v, 0); break;
      case '--server-pid': o.serverPid = num(flag, v, 1); break;
      case '--workers': o.workers = num(flag, v, 1); break;
      default: throw new Error(`unknown argument ${flag}\n${usage(name, defaultPort)}`);
    }
  }
  o.matches = Math.floor(o.matches);
  o.workers = Math.min(Math.floor(o.workers), o.matches);
  if (!o.url) o.url = `http://127.0.0.1:${o.port}`;
  return o;
}

/** utime + stime of a process in µs, from /proc/PID/stat; null if it is gone. */
function cpuUs(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * US_PER_TICK;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * What a connection waits for: `until(test)` resolves with the time at which
 * `test()` first holds (checked at once and on each `poke()`, which the peer
 * calls whenever its client has new state), and rejects on `fail(err)` (a
 * drop, an error message) or after 10 s. One sweep checks every deadline,
 * instead of a timer per wait, to keep the load client's CPU down.
 */
class Watch {
  constructor(run) {
    this.run = run;
    this.pending = null;
    this.failed = null;
  }
  until(test, what) {
    if (this.failed) return Promise.reject(this.failed);
    if (test()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      this.pending = { test, resolve, reject, what, deadline: performance.now() + STEP_TIMEOUT_MS };
      this.run.waiting.add(this);
    });
  }
  poke() {
    const p = this.pending;
    if (p !== null && p.test()) {
      this.pending = null;
      this.run.waiting.delete(this);
      p.resolve(performance.now());
    }
  }
  fail(err) {
    if (this.failed === null) this.failed = err instanceof Error ? err : new Error(String(err));
    const p = this.pending;
    if (p !== null) {
      this.pending = null;
      this.run.waiting.delete(this);
      p.reject(this.failed);
    }
  }
  expire(now) {
    const p = this.pending;
    if (p !== null && now > p.deadline) {
      this.pending = null;
      this.run.waiting.delete(this);
      p.reject(new Error(`no ${p.what} within ${STEP_TIMEOUT_MS / 1000} s`));
    }
  }
}

/** One load process's share of the matches. */
class Run {
  constructor(url) {
    this.url = url; // the server, e.g. http://127.0.0.1:17893
    this.start = Infinity; // performance.now() ms; set when the clock starts
    this.end = Infinity;
    this.latencies = []; // µs
    this.errors = 0;
    this.shown = 0;
    this.waiting = new Set();
    this.sweep = setInterval(() => {
      const now = performance.now();
      for (const w of this.waiting) w.expire(now);
    }, 250);
  }
  ended() {
    return performance.now() >= this.end;
  }
  watch() {
    return new Watch(this);
  }
  record(sent, done) {
    if (sent >= this.start && done <= this.end) this.latencies.push(Math.max(1, Math.round((done - sent) * 1000)));
  }
  error(err, what) {
    this.errors += 1;
    // The first few are shown, so a failed run says why.
    if (this.shown++ < 5) console.error(`load: error${what ? ` ${what}` : ''}: ${err && err.message ? err.message : err}`);
  }
}

/** Runs `tasks` (functions returning promises), `limit` at a time. */
async function limited(tasks, limit) {
  const results = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++;
      try {
        results[i] = { ok: await tasks[i]() };
      } catch (err) {
        results[i] = { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

/** Plays on one pair until the window closes; a failure counts, and the pair reopens. */
async function drive(peer, i, pair, run) {
  for (;;) {
    try {
      if (!(await peer.play(pair, run))) break;
    } catch (err) {
      run.error(err);
      peer.close(pair);
      if (run.ended()) return;
      await sleep(100);
      try {
        pair = await withTimeout(peer.open(i, run), STEP_TIMEOUT_MS, 'reopening a pair');
      } catch (err2) {
        run.error(err2, 'reopening a pair');
        await sleep(1000);
        if (run.ended()) return;
      }
    }
  }
  peer.close(pair);
}

/**
 * Opens matches [first, first + count), waits for `go()` to give the window
 * (performance.timeOrigin-based epoch ms of its start, and its length), plays
 * until it closes; returns the latencies and errors.
 */
async function share(peer, opts, first, count, go) {
  const run = new Run(opts.url);
  const opened = await limited(
    Array.from({ length: count }, (_, k) => () => withTimeout(peer.open(first + k, run), 3 * STEP_TIMEOUT_MS, 'opening a pair')),
    OPENING_AT_ONCE,
  );
  const pairs = [];
  opened.forEach((r, k) => {
    if (r.err) run.error(r.err, 'opening a pair');
    else pairs.push([first + k, r.ok]);
  });
  const { startEpoch, durationMs } = await go();
  run.start = startEpoch - performance.timeOrigin;
  run.end = run.start + durationMs;
  await Promise.all(pairs.map(([i, pair]) => drive(peer, i, pair, run)));
  clearInterval(run.sweep);
  return { latencies: run.latencies, errors: run.errors };
}

function quantile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The one-line result, as `grundy-load run` prints it. */
function line(opts, latencies, errors, serverCpuUs, loadCpuUs) {
  latencies.sort((a, b) => a - b);
  const ms = (us) => (Math.round(us / 10) / 100).toFixed(2);
  const moves = latencies.length;
  const perMove = (us) => (us === null || moves === 0 ? '-' : (us / moves).toFixed(2));
  return [
    `matches=${opts.matches}`,
    `moves_per_s=${(moves / opts.duration).toFixed(1)}`,
    `p50_ms=${ms(quantile(latencies, 0.5))}`,
    `p99_ms=${ms(quantile(latencies, 0.99))}`,
    `max_ms=${ms(moves ? latencies[moves - 1] : 0)}`,
    `errors=${errors}`,
    `server_us_per_move=${perMove(serverCpuUs)}`,
    `load_us_per_move=${perMove(loadCpuUs)}`,
    `load_cores=${loadCpuUs === null ? '-' : (loadCpuUs / (opts.duration * 1e6)).toFixed(2)}`,
  ].join(' ');
}

/** CPU (µs) of the server and of the load processes between the window's ends. */
function measureCpu(opts, loadPids, startEpoch) {
  const read = () => ({
    server: opts.serverPid ? cpuUs(opts.serverPid) : null,
    load: loadPids.map(cpuUs),
  });
  return new Promise((resolve) => {
    let before;
    setTimeout(() => {
      before = read();
      setTimeout(() => {
        const after = read();
        const server = before.server === null || after.server === null ? null : after.server - before.server;
        let load = 0;
        for (let k = 0; k < loadPids.length; k++) {
          if (before.load[k] === null || after.load[k] === null) return resolve({ server, load: null });
          load += after.load[k] - before.load[k];
        }
        resolve({ server, load });
      }, Math.max(0, startEpoch + opts.duration * 1000 - Date.now()));
    }, Math.max(0, startEpoch - Date.now()));
  });
}

const epochNow = () => performance.timeOrigin + performance.now();

/** The entry point of a peer's load.js. */
async function main(peer, defaultPort) {
  // A worker process: its share comes from the parent, its window too.
  if (process.env.BENCH_LOAD_WORKER) {
    const opts = JSON.parse(process.env.BENCH_LOAD_WORKER);
    let release;
    const go = () => {
      process.send({ ready: true });
      return new Promise((r) => { release = r; });
    };
    process.on('message', (m) => { if (m.go) release(m.go); });
    const result = await share(peer, opts, opts.first, opts.count, go);
    process.send({ result }, () => process.exit(0));
    return;
  }
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2), peer.name, defaultPort);
  } catch (err) {
    console.error(`load: ${err.message}`);
    process.exit(2);
  }
  let latencies = [];
  let errors = 0;
  let cpu;
  if (opts.workers === 1) {
    // This process alone: its own CPU is the load's.
    const result = await share(peer, opts, 0, opts.matches, async () => {
      const go = { startEpoch: epochNow() + opts.warmup * 1000, durationMs: opts.duration * 1000 };
      cpu = measureCpu(opts, [process.pid], go.startEpoch);
      return go;
    });
    latencies = result.latencies;
    errors = result.errors;
    cpu = await cpu;
  } else {
    // Workers, each with a share of the matches; this process only waits
    // (its own CPU is counted too).
    const workers = [];
    for (let w = 0; w < opts.workers; w++) {
      const first = Math.floor((opts.matches * w) / opts.workers);
      const count = Math.floor((opts.matches * (w + 1)) / opts.workers) - first;
      const env = { ...process.env, BENCH_LOAD_WORKER: JSON.stringify({ ...opts, first, count }) };
      workers.push(fork(process.argv[1], [], { env }));
    }
    const results = workers.map((child) => new Promise((resolve, reject) => {
      child.on('message', (m) => { if (m.result) resolve(m.result); });
      child.on('exit', (code) => reject(new Error(`a load worker exited (${code}) without a result`)));
    }));
    // Every worker has opened its connections (or died trying) before the clock.
    await Promise.all(workers.map((child) => new Promise((r) => { child.once('message', r); child.once('exit', r); })));
    const go = { startEpoch: epochNow() + opts.warmup * 1000, durationMs: opts.duration * 1000 };
    const measuring = measureCpu(opts, [process.pid, ...workers.map((c) => c.pid)], go.startEpoch);
    for (const child of workers) child.send({ go });
    for (const r of await Promise.allSettled(results)) {
      if (r.status === 'fulfilled') {
        for (const us of r.value.latencies) latencies.push(us);
        errors += r.value.errors;
      } else {
        console.error(`load: error: ${r.reason.message}`);
        errors += 1;
      }
    }
    cpu = await measuring;
  }
  console.log(line(opts, latencies, errors, cpu.server, cpu.load));
  // Connections still closing must not hold the result back.
  process.exit(0);
}

/** The move the load plays: one stone from the first non-empty heap. */
function firstMove(heaps) {
  for (let h = 0; h < heaps.length; h++) if (heaps[h] > 0) return h;
  return -1;
}

module.exports = { main, firstMove, NIM_START, NIM_MOVES, STEP_TIMEOUT_MS, sleep };
