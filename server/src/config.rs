//! Server settings: where to listen, where to keep matches, and the limits that
//! are part of the protocol (docs/protocol.md, "Limits").

use std::time::Duration;

use grundy_protocol::wire::Limits;
use ipnet::IpNet;

#[derive(Debug, Clone)]
pub struct Config {
    pub limits: Limits,
    /// Frames queued for one connection before it counts as a slow reader.
    pub outbox_capacity: usize,
    /// Bytes of text queued for one connection before it counts as a slow
    /// reader (one larger write, a message or the few frames of one
    /// decision, passes when nothing else is queued).
    pub outbox_bytes: usize,
    /// Bytes of text queued for all connections together; past it, the
    /// connections with the most queued are dropped first (1013,
    /// `outbox::BUDGET`).
    pub max_queued_bytes: usize,
    /// A player's first move must come within this (timed matches), or the match
    /// is aborted as a no-show.
    pub no_show: Duration,
    /// A room with nobody connected is called off (aborted) after this, unless
    /// a running clock will end it anyway.
    pub abandon: Duration,
    /// A room no clock will end (open, or untimed) with no move (before the
    /// start: no second player) for this long is called off (aborted),
    /// whoever is connected: its creator's `open_rooms` and
    /// `open_rooms_per_ip` places come back.
    pub idle_room: Duration,
    /// How long a finished room stays in memory for watchers and late resumes.
    pub linger: Duration,
    /// Finished rooms kept in memory at most: past this, the ones that finished
    /// longest ago leave early (their records stay in the store). Under a
    /// sustained load of short matches, `linger` alone would let them pile up.
    pub finished_rooms_in_memory: usize,
    /// The same for finished tournaments.
    pub finished_tournaments_in_memory: usize,
    /// Largest `position` sent inside a move event; larger positions are left
    /// out (clients replay the moves from the spec).
    pub max_event_position_bytes: usize,
    /// Serve `create_room` requests for a bot with a house bot of this server
    /// (a protocol client over loopback). Off: external `grundy-bot house`
    /// processes serve them.
    pub house_bots: bool,
    /// Events a room keeps at hand for a catch-up after a short drop; a
    /// client further behind gets a snapshot.
    pub events_in_memory: usize,
    /// Spec builds (and random starts) run at once, off the reactor, and how
    /// many may wait for a turn before more are refused (`busy`).
    pub spec_builds: usize,
    pub spec_builds_queued: usize,
    /// Store reads for clients (`get_match`) at once, and how many may wait.
    /// (`get_tournament` from the store rebuilds the tournament's starts: a
    /// spec build.)
    pub store_reads: usize,
    pub store_reads_queued: usize,
    /// A cluster's node: lookups of the node that owns a room (one per room
    /// and connection, on `join`, `watch`, `resume` of another node's room),
    /// at once and queued. Apart from `store_reads`: a burst of joins must
    /// not refuse a player's `get_match`, nor the reverse.
    pub owner_lookups: usize,
    pub owner_lookups_queued: usize,
    /// Password hashes and checks (Argon2id: tens of milliseconds and 19
    /// MiB each) at once, and how many may wait.
    pub password_checks: usize,
    pub password_checks_queued: usize,
    /// A cluster's node: reads of an account again from the database (a
    /// `hello` or HTTP request with a token, a `login`), at once and queued.
    pub account_reads: usize,
    pub account_reads_queued: usize,
    /// Peers whose `Forwarded` / `X-Forwarded-For` headers are believed
    /// (`--trusted-proxy`): for a connection from one of these, the client
    /// is the right-most address the header gives that is not itself in
    /// these ranges (`net/forwarded.rs`), and every per-address limit, log
    /// line and metric counts that address. Empty: nothing forwarded is
    /// believed.
    pub trusted_proxies: Vec<IpNet>,
    /// Client addresses not counted against the per-address limits
    /// (`connections_per_ip`, `open_rooms_per_ip`, `logins_per_ip_per_minute`,
    /// `accounts_per_ip_per_hour`; `--unlimited-from`): e.g. the benchmark's
    /// load generators on loopback. They still count against
    /// `max_connections`. Empty by default: every address is limited. (The
    /// house bots need no entry: they come in on a listener of their own,
    /// `server.rs`.)
    pub unlimited_from: Vec<IpNet>,
    /// Refusals (handshake, close frame, linger: a few seconds each) under
    /// way at once; past this a connection over a cap is dropped without a
    /// handshake, so that a flood of them costs no more than this many sockets.
    pub refusals_in_flight: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            limits: Limits {
                max_frame_bytes: 64 * 1024,
                // Enough for a bot that answers at once in a long game (a move
                // round trip takes about a millisecond), far below a flood.
                messages_per_second: 300,
                burst: 300,
                seats_per_connection: 64,
                open_rooms: 100_000,
                // A room for each connection an address may hold
                // (`connections_per_ip`): it takes 391 addresses to fill
                // `open_rooms`, not a handful.
                open_rooms_per_ip: 256,
                hello_timeout_ms: 10_000,
                ping_interval_ms: 5_000,
                idle_timeout_ms: 15_000,
                open_tournaments: 1_000,
                tournament_players: 1_024,
                // The default of common WebSocket clients (Python's
                // `websockets` refuses larger messages): a snapshot holds a
                // spec (at most 64 KiB), its position and at most
                // `max_record_bytes` of moves, so it always fits.
                max_message_bytes: 1024 * 1024,
                // A match between people is over long before; one between
                // bots that drag a lost game out (huge heaps, one token a
                // move) is decided by the theory instead.
                max_moves: 1_000,
                max_record_bytes: 256 * 1024,
                // Each connection holds a file descriptor, and a house bot's
                // two (both its ends are in this process). A process gets
                // 20,000 here (`ulimit -n`, docs/performance.md): 8,000
                // connections, even all of them house bots, plus the
                // refusals in flight and the store's files stay below it, so
                // the server turns connections away before `accept` fails.
                // Raise it with `--max-connections` along with `ulimit -n`.
                max_connections: 8_000,
                // A household or an office behind one NAT address, or a
                // field of bots run from one machine (two connections per
                // tournament player), fits; one address alone cannot take
                // more than a thirtieth of `max_connections`.
                connections_per_ip: 256,
                // Five guesses, then 1 s, 2 s, 4 s ... up to 15 minutes: a
                // person who mistypes barely notices, a guesser gets a few
                // dozen tries a day per account.
                login_failures_before_lockout: 5,
                login_lockout_max_ms: 15 * 60 * 1000,
                logins_per_ip_per_minute: 30,
                accounts_per_ip_per_hour: 20,
                tokens_per_account: 100,
                // A season on one device without logging in again; a bot's
                // token is renewed at least once a year.
                token_default_days: 90,
                token_max_days: 365,
            },
            outbox_capacity: 1024,
            outbox_bytes: 8 * 1024 * 1024,
            // Thirty-two readers at their own full bound: far more than
            // honest slow readers hold at once, and a flood of them never
            // takes more than this of the machine's memory.
            max_queued_bytes: 256 * 1024 * 1024,
            no_show: Duration::from_secs(30),
            abandon: Duration::from_secs(600),
            // An hour: longer than anyone waits in the lobby for an opponent or
            // thinks over one untimed move, short enough that places held by
            // rooms nobody plays in come back the same hour.
            idle_room: Duration::from_secs(3_600),
            linger: Duration::from_secs(300),
            finished_rooms_in_memory: 10_000,
            finished_tournaments_in_memory: 1_000,
            max_event_position_bytes: 16 * 1024,
            house_bots: true,
            events_in_memory: 32,
            // One build at a time keeps a core for the matches in progress.
            spec_builds: 1,
            spec_builds_queued: 64,
            store_reads: 2,
            store_reads_queued: 256,
            owner_lookups: 4,
            owner_lookups_queued: 8192,
            password_checks: 1,
            password_checks_queued: 32,
            account_reads: 2,
            account_reads_queued: 256,
            trusted_proxies: Vec::new(),
            unlimited_from: Vec::new(),
            // 1,024 sockets at most, for up to about four seconds each.
            refusals_in_flight: 1_024,
        }
    }
}
