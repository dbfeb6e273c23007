//! The flags of `grundy-server` (and `config check`), each also read from
//! its environment variable, `GRUNDY_` and the flag's name in capitals.
//!
//! Every flag is an `Option` with no default of clap's: what was given is
//! `Some`, and only that is laid over the file ([`super::Settings::load`]);
//! the defaults are [`super::Settings::default`]. A flag's field name is its
//! key in the file; a limit's flag is a field of [`LimitFlags`], which fills
//! the `[limits]` table. The tests hold every flag to these rules.

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::Serialize;

use super::LogFormat;

/// What `grundy-server` and `grundy-server config check` take.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// A configuration file (TOML; docs/deploy.md, "Configuration"): a key
    /// for every flag below, the limits in a `[limits]` table. Environment
    /// variables override it, and flags override both.
    #[arg(long, value_name = "FILE", env = "GRUNDY_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub flags: Flags,
}

/// The settings a flag (or its variable) gives; `None`: not given.
#[derive(clap::Args, Serialize, Debug, Clone, Default)]
pub struct Flags {
    /// Address to listen on (port 0 picks a free port). [default: 127.0.0.1:7878]
    #[arg(long, env = "GRUNDY_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Where matches are kept: an SQLite file (created on first start), or a
    /// PostgreSQL database, `postgres://user:password@host:port/dbname`
    /// (its tables are created or migrated at start). [default: ./grundy.db]
    #[arg(long, env = "GRUNDY_DB")]
    pub db: Option<String>,
    /// Run as one node of a cluster: several servers share the PostgreSQL
    /// `--db`, each room is owned by one node at a time, and the rooms of a
    /// node that stops or dies are taken over by the others.
    #[arg(long, env = "GRUNDY_CLUSTER", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub cluster: Option<bool>,
    /// With `--cluster`: how long (milliseconds, 200 to 600000) a node that
    /// stops renewing its lease keeps its rooms before other nodes take
    /// them over. [default: 5000]
    #[arg(long, env = "GRUNDY_LEASE_MS")]
    pub lease_ms: Option<u64>,
    /// With `--cluster`: the nodes' bus, `nats://host:port` (NATS). Through
    /// it a client of any node plays in rooms other nodes own; without it a
    /// room is served by its owner only.
    #[arg(long, env = "GRUNDY_BUS")]
    pub bus: Option<String>,
    /// A proxy (an address or CIDR range, e.g. `10.0.0.0/8`; repeatable, or
    /// comma-separated) whose `Forwarded` / `X-Forwarded-For` headers are
    /// believed: the client of a connection from it is the right-most
    /// address they give that is not itself a trusted proxy, and every
    /// per-address limit and log line counts that address. Without it
    /// nothing forwarded is believed (docs/deploy.md).
    #[arg(long, value_name = "CIDR", value_parser = super::parse_range,
          value_delimiter = ',', env = "GRUNDY_TRUSTED_PROXY")]
    pub trusted_proxy: Option<Vec<ipnet::IpNet>>,
    /// Client addresses (an address or CIDR range; repeatable, or
    /// comma-separated) not counted against the per-address limits, e.g.
    /// `127.0.0.1` for load generators on this host. Default: none (the
    /// house bots have a port of their own and need none).
    #[arg(long, value_name = "CIDR", value_parser = super::parse_range,
          value_delimiter = ',', env = "GRUNDY_UNLIMITED_FROM")]
    pub unlimited_from: Option<Vec<ipnet::IpNet>>,
    /// Serve TLS on `--listen` (https:// and wss://: the web app, the API
    /// and the WebSocket) with this certificate chain, PEM, the server's
    /// own certificate first. Read again when the file changes (looked at
    /// every 5 s) or on SIGHUP; a bad new file keeps the old certificate.
    #[arg(long, value_name = "FILE", env = "GRUNDY_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert`, PEM (PKCS#8, RSA or EC).
    #[arg(long, value_name = "FILE", env = "GRUNDY_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// Serve TLS on `--listen` with a certificate obtained and renewed over
    /// ACME (Let's Encrypt unless `--acme-directory` says otherwise) for this
    /// name (repeatable, or comma-separated: one certificate for every
    /// name). The directory validates a name by TLS-ALPN-01, connecting to
    /// port 443 of the name: that must reach `--listen`. Not with
    /// `--tls-cert`.
    #[arg(long, value_name = "NAME", value_parser = super::parse_domain,
          value_delimiter = ',', env = "GRUNDY_ACME_DOMAIN")]
    pub acme_domain: Option<Vec<String>>,
    /// With `--acme-domain`: the account's contact (repeatable, or
    /// comma-separated), a `mailto:` URL; the directory writes there about
    /// expiring certificates and changes of terms.
    #[arg(long, value_name = "mailto:ADDRESS", value_parser = super::parse_contact,
          value_delimiter = ',', env = "GRUNDY_ACME_CONTACT")]
    pub acme_contact: Option<Vec<String>>,
    /// With `--acme-domain`: the ACME directory's URL. [default: Let's
    /// Encrypt's, https://acme-v02.api.letsencrypt.org/directory]
    #[arg(long, value_name = "URL", env = "GRUNDY_ACME_DIRECTORY")]
    pub acme_directory: Option<String>,
    /// With `--acme-domain`: a CA certificate (PEM) the directory's own
    /// https:// certificate may chain to, besides the public roots: for a
    /// test directory such as pebble.
    #[arg(long, value_name = "FILE", env = "GRUNDY_ACME_DIRECTORY_CA")]
    pub acme_directory_ca: Option<PathBuf>,
    /// With `--acme-domain`: where the ACME account key and the certificate
    /// are kept (made if missing, readable by its owner only). A restart
    /// serves the cached certificate and orders nothing. [default:
    /// ./grundy-acme]
    #[arg(long, value_name = "DIR", env = "GRUNDY_ACME_CACHE")]
    pub acme_cache: Option<PathBuf>,
    /// With `--tls-cert` or `--acme-domain`: also answer plain HTTP on this
    /// port (on the `--listen` address) with a redirect to https://.
    #[arg(long, value_name = "PORT", env = "GRUNDY_HTTP_REDIRECT_PORT")]
    pub http_redirect_port: Option<u16>,
    /// Seconds a room no clock will end (open, or untimed) may go without a
    /// move (before the start: without its second player) before it is
    /// called off, whoever is connected. [default: 3600]
    #[arg(long, value_name = "SECONDS", env = "GRUNDY_IDLE_ROOM_SECS")]
    pub idle_room_secs: Option<u64>,
    /// Bytes of outbound text queued for all connections together; past it
    /// the connections with the most queued are closed first (1013).
    /// [default: 268435456]
    #[arg(long, value_name = "BYTES", env = "GRUNDY_MAX_QUEUED_BYTES")]
    pub max_queued_bytes: Option<usize>,
    /// How log lines are written to stderr: `text` (for a person) or `json`
    /// (one JSON object a line, for a log collector). [default: text]
    #[arg(long, value_enum, value_name = "FORMAT", env = "GRUNDY_LOG_FORMAT")]
    pub log_format: Option<LogFormat>,
    /// Log every WebSocket text frame read and sent (target
    /// `grundy_server::frames`), the values of keys naming a password or a
    /// token masked as "***". Without it no frame's content is logged at any
    /// level, `RUST_LOG=trace` included.
    #[arg(long, env = "GRUNDY_LOG_FRAMES", num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub log_frames: Option<bool>,
    #[command(flatten)]
    pub limits: LimitFlags,
}

/// The limits with a flag of their own (every limit is a key of the file's
/// `[limits]`, docs/protocol.md "Limits"). A field's name is the limit's.
#[derive(clap::Args, Serialize, Debug, Clone, Default)]
pub struct LimitFlags {
    /// The `messages_per_second` limit (per connection), e.g. for load tests.
    #[arg(long, env = "GRUNDY_MESSAGES_PER_SECOND")]
    pub messages_per_second: Option<u32>,
    /// The `burst` limit (messages a connection may send at once).
    #[arg(long, env = "GRUNDY_BURST")]
    pub burst: Option<u32>,
    /// The `max_connections` limit (WebSocket connections held at once);
    /// keep it below the open-file limit (`ulimit -n`).
    #[arg(long, env = "GRUNDY_MAX_CONNECTIONS")]
    pub max_connections: Option<usize>,
    /// The `connections_per_ip` limit (connections held at once from one
    /// client address; addresses in `--unlimited-from` are not counted).
    #[arg(long, env = "GRUNDY_CONNECTIONS_PER_IP")]
    pub connections_per_ip: Option<usize>,
    /// The `open_rooms_per_ip` limit (rooms with unfinished matches created
    /// from one client address; addresses in `--unlimited-from` are not
    /// counted).
    #[arg(long, env = "GRUNDY_OPEN_ROOMS_PER_IP")]
    pub open_rooms_per_ip: Option<usize>,
    /// The `logins_per_ip_per_minute` limit (logins from one client address
    /// in a minute).
    #[arg(long, env = "GRUNDY_LOGINS_PER_IP_PER_MINUTE")]
    pub logins_per_ip_per_minute: Option<u32>,
    /// The `accounts_per_ip_per_hour` limit (accounts opened from one
    /// client address in an hour).
    #[arg(long, env = "GRUNDY_ACCOUNTS_PER_IP_PER_HOUR")]
    pub accounts_per_ip_per_hour: Option<u32>,
}

/// The environment variable of the flag or key `name`.
pub fn env_name(name: &str) -> String {
    format!("GRUNDY_{}", name.replace('-', "_").to_uppercase())
}
