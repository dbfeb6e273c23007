//! `grundy-server`: the match server.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use grundy_server::cluster::bus::Bus;
use grundy_server::net::redirect;
use grundy_server::net::tls::acme::{self, Acme, AcmeSettings};
use grundy_server::net::tls::{CertificateFiles, Tls};
use grundy_server::server::Listener;
use grundy_server::store::{MatchStore, PgStore, SqliteStore, StoreError};
use grundy_server::{Config, Server};

/// Every message and event allocates a little; glibc's per-thread arenas grow
/// and shrink under that churn (a tenth of the workers' time under load went to
/// it), mimalloc keeps it to thread-local free lists.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Grundy match server: hosts matches of every game in the catalogue over
/// WebSocket (protocol v1), keeps every match in SQLite (or PostgreSQL), and
/// brings unfinished matches back after a restart.
#[derive(Parser)]
#[command(name = "grundy-server", version)]
#[command(group = clap::ArgGroup::new("tls").args(["tls_cert", "acme_domain"]).multiple(false))]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
    /// Where matches are kept: an SQLite file (created on first start), or a
    /// PostgreSQL database, `postgres://user:password@host:port/dbname`
    /// (its tables are created or migrated at start).
    #[arg(long, env = "GRUNDY_DB", default_value = "./grundy.db")]
    db: String,
    /// Run as one node of a cluster: several servers share the PostgreSQL
    /// `--db`, each room is owned by one node at a time, and the rooms of a
    /// node that stops or dies are taken over by the others.
    #[arg(long)]
    cluster: bool,
    /// With `--cluster`: how long (milliseconds) a node that stops renewing
    /// its lease keeps its rooms before other nodes take them over.
    #[arg(long, default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(200..=600_000))]
    lease_ms: u64,
    /// With `--cluster`: the nodes' bus, `nats://host:port` (NATS). Through
    /// it a client of any node plays in rooms other nodes own; without it a
    /// room is served by its owner only.
    #[arg(long, env = "GRUNDY_BUS", requires = "cluster")]
    bus: Option<String>,
    /// Override the `messages_per_second` limit (per connection), e.g. for load tests.
    #[arg(long)]
    messages_per_second: Option<u32>,
    /// Override the `burst` limit (messages a connection may send at once).
    #[arg(long)]
    burst: Option<u32>,
    /// Override the `max_connections` limit (WebSocket connections held at
    /// once); keep it below the open-file limit (`ulimit -n`).
    #[arg(long)]
    max_connections: Option<usize>,
    /// Override the `connections_per_ip` limit (connections held at once from
    /// one client address; addresses in `--unlimited-from` are not counted).
    #[arg(long)]
    connections_per_ip: Option<usize>,
    /// Override the `open_rooms_per_ip` limit (rooms with unfinished matches
    /// created from one client address; addresses in `--unlimited-from` are
    /// not counted).
    #[arg(long)]
    open_rooms_per_ip: Option<usize>,
    /// Seconds a room no clock will end (open, or untimed) may go without a
    /// move (before the start: without its second player) before it is
    /// called off, whoever is connected (3,600).
    #[arg(long, value_name = "SECONDS")]
    idle_room_secs: Option<u64>,
    /// Bytes of outbound text queued for all connections together; past it
    /// the connections with the most queued are closed first (1013)
    /// (268,435,456).
    #[arg(long, value_name = "BYTES")]
    max_queued_bytes: Option<usize>,
    /// Override the `logins_per_ip_per_minute` limit (logins from one client
    /// address in a minute).
    #[arg(long)]
    logins_per_ip_per_minute: Option<u32>,
    /// Override the `accounts_per_ip_per_hour` limit (accounts opened from
    /// one client address in an hour).
    #[arg(long)]
    accounts_per_ip_per_hour: Option<u32>,
    /// A proxy (an address or CIDR range, e.g. `10.0.0.0/8`; repeatable)
    /// whose `Forwarded` / `X-Forwarded-For` headers are believed: the
    /// client of a connection from it is the right-most address they give
    /// that is not itself a trusted proxy, and every per-address limit and
    /// log line counts that address. Without it nothing forwarded is
    /// believed (docs/deploy.md).
    #[arg(long, value_name = "CIDR", value_parser = parse_range)]
    trusted_proxy: Vec<ipnet::IpNet>,
    /// Client addresses (an address or CIDR range; repeatable) not counted
    /// against the per-address limits, e.g. `127.0.0.1` for load
    /// generators on this host. Default: none (the house bots have a port
    /// of their own and need none).
    #[arg(long, value_name = "CIDR", value_parser = parse_range)]
    unlimited_from: Vec<ipnet::IpNet>,
    /// Serve TLS on `--listen` (https:// and wss://: the web app, the API
    /// and the WebSocket) with this certificate chain, PEM, the server's
    /// own certificate first. Read again when the file changes (looked at
    /// every 5 s) or on SIGHUP; a bad new file keeps the old certificate.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert`, PEM (PKCS#8, RSA or EC).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Serve TLS on `--listen` with a certificate obtained and renewed over
    /// ACME (Let's Encrypt unless `--acme-directory` says otherwise) for this
    /// name (repeatable: one certificate for every name). The directory
    /// validates a name by TLS-ALPN-01, connecting to port 443 of the name:
    /// that must reach `--listen`. Not with `--tls-cert`.
    #[arg(long, value_name = "NAME", value_parser = parse_domain)]
    acme_domain: Vec<String>,
    /// With `--acme-domain`: the account's contact (repeatable), a
    /// `mailto:` URL; the directory writes there about expiring
    /// certificates and changes of terms.
    #[arg(long, value_name = "mailto:ADDRESS", requires = "acme_domain",
          value_parser = parse_contact)]
    acme_contact: Vec<String>,
    /// With `--acme-domain`: the ACME directory's URL.
    #[arg(long, value_name = "URL", requires = "acme_domain", default_value = acme::LETS_ENCRYPT)]
    acme_directory: String,
    /// With `--acme-domain`: a CA certificate (PEM) the directory's own
    /// https:// certificate may chain to, besides the public roots: for a
    /// test directory such as pebble.
    #[arg(long, value_name = "FILE", requires = "acme_domain")]
    acme_directory_ca: Option<PathBuf>,
    /// With `--acme-domain`: where the ACME account key and the certificate
    /// are kept (made if missing, readable by its owner only). A restart
    /// serves the cached certificate and orders nothing.
    #[arg(
        long,
        value_name = "DIR",
        requires = "acme_domain",
        default_value = "./grundy-acme"
    )]
    acme_cache: PathBuf,
    /// With `--tls-cert` or `--acme-domain`: also answer plain HTTP on this
    /// port (on the `--listen` address) with a redirect to https://.
    #[arg(long, value_name = "PORT", requires = "tls")]
    http_redirect_port: Option<u16>,
    /// How log lines are written to stderr: `text` (for a person) or `json`
    /// (one JSON object a line, for a log collector).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    /// Log every WebSocket text frame read and sent (target
    /// `grundy_server::frames`), the values of keys naming a password or a
    /// token masked as "***". Without it no frame's content is logged at any
    /// level, `RUST_LOG=trace` included.
    #[arg(long)]
    log_frames: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Targets whose most verbose levels print what a client sent or was sent
/// (passwords, tokens) whole: the WebSocket library prints every frame at
/// `trace`, the NATS client every bus message (forwarded commands) at
/// `trace`, the PostgreSQL client every statement's parameters (hashes of
/// passwords and tokens) at `debug`. Held at these levels whatever
/// `RUST_LOG` asks; `--log-frames` logs frames itself, masked.
const CAPPED_TARGETS: &[(&str, tracing::Level)] = &[
    ("tungstenite", tracing::Level::DEBUG),
    ("tokio_tungstenite", tracing::Level::DEBUG),
    ("async_nats", tracing::Level::DEBUG),
    ("tokio_postgres", tracing::Level::INFO),
];

/// Logs go to stderr; stdout carries only the `listening on` line. Colours
/// only on a terminal: a log file gets plain text. `RUST_LOG` chooses what is
/// logged (default `info`), within [`CAPPED_TARGETS`].
fn init_logging(format: LogFormat, log_frames: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::EnvFilter;

    let mut filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,refinery_core=warn,postgres=warn,tokio_postgres=warn".into());
    if log_frames {
        let frames = format!("{}=debug", grundy_server::frame_log::TARGET);
        if let Ok(directive) = frames.parse() {
            filter = filter.add_directive(directive);
        }
    }
    let caps = caps_within(filter.max_level_hint());
    let registry = tracing_subscriber::registry().with(filter).with(caps);
    let stderr = std::io::stderr;
    match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(stderr)
                    .with_ansi(std::io::stderr().is_terminal()),
            )
            .init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_ansi(false)
                    .with_writer(stderr),
            )
            .init(),
    }
    grundy_server::frame_log::set(log_frames);
}

/// [`CAPPED_TARGETS`] as a filter that lets through no more than `most`,
/// `RUST_LOG`'s most verbose level: the subscriber's level is the most
/// verbose of its filters', and a disabled `debug!` on the move path costs
/// a callsite check instead of one comparison if this one says `trace`.
fn caps_within(
    most: Option<tracing_subscriber::filter::LevelFilter>,
) -> tracing_subscriber::filter::Targets {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    let most = most.unwrap_or(LevelFilter::TRACE);
    CAPPED_TARGETS
        .iter()
        .fold(Targets::new().with_default(most), |t, &(target, level)| {
            t.with_target(target, LevelFilter::from_level(level).min(most))
        })
}

/// A CIDR range, or one address (as its /32 or /128).
fn parse_range(s: &str) -> Result<ipnet::IpNet, String> {
    if let Ok(net) = s.parse::<ipnet::IpNet>() {
        return Ok(net.trunc());
    }
    s.parse::<std::net::IpAddr>()
        .map(ipnet::IpNet::from)
        .map_err(|_| {
            format!("{s:?} is not an address or a CIDR range (like 10.0.0.0/8 or ::1/128)")
        })
}

/// A name a certificate can be ordered for: a DNS name, not an address.
fn parse_domain(s: &str) -> Result<String, String> {
    use rustls::pki_types::ServerName;
    match ServerName::try_from(s) {
        Ok(ServerName::DnsName(name)) => Ok(name.as_ref().to_ascii_lowercase()),
        Ok(_) => Err(format!(
            "{s:?} is an address; a certificate over ACME is for a DNS name"
        )),
        Err(_) => Err(format!("{s:?} is not a DNS name")),
    }
}

/// An ACME account's contact: a `mailto:` URL.
fn parse_contact(s: &str) -> Result<String, String> {
    match s.strip_prefix("mailto:") {
        Some(address) if address.contains('@') => Ok(s.to_string()),
        _ => Err(format!(
            "{s:?} is not a contact: write mailto:you@example.org"
        )),
    }
}

/// How often the certificate files are looked at for a change.
const CERTIFICATE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

fn main() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let code = runtime.block_on(run());
    // Every wait of the shutdown is bounded; a thread still blocked on a
    // database or bus that stopped answering must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

async fn run() -> anyhow::Result<ExitCode> {
    // The flags first: a bad one is said before anything is logged.
    let args = Args::parse();
    init_logging(args.log_format, args.log_frames);
    // The address first: a port in use must not leave a new database behind.
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", args.listen);
            return Ok(ExitCode::FAILURE);
        }
    };
    // The certificate before the database, as the address: a bad file must
    // not leave a new database behind either.
    let certificates = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => match CertificateFiles::open(cert, key) {
            Ok(files) => Some(files),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::FAILURE);
            }
        },
        _ => None,
    };
    let acme = match acme_settings(&args) {
        Ok(Some(settings)) => match Acme::new(settings) {
            Ok(acme) => Some(acme),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::FAILURE);
            }
        },
        Ok(None) => None,
        Err(e) => {
            eprintln!("error: {e} (--acme-directory-ca)");
            return Ok(ExitCode::FAILURE);
        }
    };
    let redirect_listener = match args.http_redirect_port {
        Some(port) => {
            let at = std::net::SocketAddr::new(args.listen.ip(), port);
            match tokio::net::TcpListener::bind(at).await {
                Ok(listener) => Some(listener),
                Err(e) => {
                    eprintln!("error: cannot listen on {at} (--http-redirect-port): {e}");
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        None => None,
    };
    let lease = args
        .cluster
        .then(|| std::time::Duration::from_millis(args.lease_ms));
    let store = match open_store(&args.db, lease) {
        Ok(store) => store,
        // The one refusal a person running the command must act on: said
        // plainly, with what to do, not as a chain of causes.
        Err(StoreError::InUse { path, pid }) => {
            let by = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
            eprintln!(
                "error: the database {} is in use by another grundy-server{by}; \
                 stop it first or choose another --db",
                path.display()
            );
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e).context("opening the database"),
    };
    let mut config = Config::default();
    if let Some(rate) = args.messages_per_second {
        config.limits.messages_per_second = rate.max(1);
    }
    if let Some(burst) = args.burst {
        config.limits.burst = burst.max(1);
    }
    if let Some(max) = args.max_connections {
        config.limits.max_connections = max.max(1);
    }
    if let Some(per_ip) = args.connections_per_ip {
        config.limits.connections_per_ip = per_ip.max(1);
    }
    if let Some(rooms) = args.open_rooms_per_ip {
        config.limits.open_rooms_per_ip = rooms;
    }
    if let Some(secs) = args.idle_room_secs {
        config.idle_room = std::time::Duration::from_secs(secs.max(1));
    }
    if let Some(bytes) = args.max_queued_bytes {
        config.max_queued_bytes = bytes;
    }
    if let Some(logins) = args.logins_per_ip_per_minute {
        config.limits.logins_per_ip_per_minute = logins;
    }
    if let Some(accounts) = args.accounts_per_ip_per_hour {
        config.limits.accounts_per_ip_per_hour = accounts;
    }
    config.trusted_proxies = args.trusted_proxy;
    config.unlimited_from = args.unlimited_from;
    let store: Arc<dyn MatchStore> = Arc::from(store);
    if let Some(cluster) = store.cluster() {
        // What maps this process to `room_owners` (also in /metrics and
        // /healthz; a new id is logged if the node joins again).
        tracing::info!(node = %cluster.node(), pid = std::process::id(), "joined the cluster as node {}", cluster.node());
    }
    let bus = match (&args.bus, store.cluster()) {
        (Some(url), Some(cluster)) => {
            let (name, secret) = cluster.identity();
            match Bus::connect(url, &name, secret, cluster.node()).await {
                Ok(bus) => Some(bus),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
        _ => None,
    };
    let tls = match (&certificates, &acme) {
        (Some(files), _) => Some(Tls::new(files.current())),
        (None, Some(acme)) => Some(Tls::with_acme(acme.resolver())),
        (None, None) => None,
    };
    let serves_tls = tls.is_some();
    let listener = match tls {
        Some(tls) => Listener::with_tls(listener, tls),
        None => Listener::from(listener),
    };
    let server = Server::start_node(listener, store, config, bus).await?;
    if let Some(files) = &certificates {
        let stop = server.shutdown_token();
        tokio::spawn(files.clone().watch(CERTIFICATE_CHECK_EVERY, stop.clone()));
        tokio::spawn(reload_on_hangup(files.clone(), stop));
    }
    if let Some(acme) = acme {
        tokio::spawn(acme.run(server.shutdown_token()));
    }
    if let Some(listener) = redirect_listener {
        let https_port = server.local_addr().port();
        tokio::spawn(redirect::serve(
            listener,
            https_port,
            server.shutdown_token(),
        ));
    }
    // The handlers are in place before the address is said: whoever stops
    // the server as soon as it says where it listens stops it gracefully.
    let signalled = shutdown_signal();
    // The web app's address goes to the log, for a person; then the one
    // line on stdout, exactly this, for scripts and tests that start the
    // server on port 0 (stdout is line-buffered: it is out once printed).
    let addr = server.local_addr();
    let (web, ws) = match serves_tls {
        true => ("https", "wss"),
        false => ("http", "ws"),
    };
    tracing::info!("the web app: {web}://{addr}/");
    println!("listening on {ws}://{addr}");
    let token = server.shutdown_token();
    tokio::spawn(async move {
        signalled.await;
        tracing::info!("shutting down");
        token.cancel();
    });
    server.run_until_shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// What `--acme-*` ask for; None without `--acme-domain`. Err: the
/// `--acme-directory-ca` file cannot be used.
fn acme_settings(args: &Args) -> Result<Option<AcmeSettings>, grundy_client::tls::TrustError> {
    use grundy_client::tls::Trust;
    if args.acme_domain.is_empty() {
        return Ok(None);
    }
    let trust = match &args.acme_directory_ca {
        Some(file) => Trust::with_ca_file(file)?,
        None => Trust::public(),
    };
    Ok(Some(AcmeSettings {
        domains: args.acme_domain.clone(),
        contact: args.acme_contact.clone(),
        directory: args.acme_directory.clone(),
        cache: args.acme_cache.clone(),
        directory_trust: trust.config(),
    }))
}

/// A `postgres://` (or `postgresql://`) URL opens PostgreSQL, as a
/// cluster's node when there is a `lease`; anything else is an SQLite file's
/// path (one server's alone).
fn open_store(
    db: &str,
    lease: Option<std::time::Duration>,
) -> Result<Box<dyn MatchStore>, StoreError> {
    let postgres = db.starts_with("postgres://") || db.starts_with("postgresql://");
    match (postgres, lease) {
        (true, None) => Ok(Box::new(PgStore::open(db)?)),
        (true, Some(lease)) => Ok(Box::new(PgStore::open_node(db, lease)?)),
        (false, None) => Ok(Box::new(SqliteStore::open(Path::new(db))?)),
        (false, Some(_)) => Err(StoreError::Open {
            path: db.into(),
            message: "--cluster needs a PostgreSQL --db (postgres://...): \
                      the nodes share one database"
                .into(),
        }),
    }
}

/// Reads the certificate files again at every SIGHUP, until `stop`;
/// listened for from the call on (a SIGHUP before would end the process).
fn reload_on_hangup(
    files: Arc<CertificateFiles>,
    stop: tokio_util::sync::CancellationToken,
) -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let hangup = signal(SignalKind::hangup());
        async move {
            let Ok(mut hangup) = hangup else {
                tracing::warn!("cannot listen for SIGHUP; the certificate files are still watched");
                return;
            };
            loop {
                tokio::select! {
                    _ = hangup.recv() => {
                        tracing::info!("SIGHUP: reading the TLS certificate again");
                        let _ = files.reload();
                    }
                    _ = stop.cancelled() => return,
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = files;
        async move { stop.cancelled().await }
    }
}

/// SIGTERM or SIGINT (Ctrl-C), listened for from the call on.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate());
        let interrupt = signal(SignalKind::interrupt());
        async move {
            match (term, interrupt) {
                (Ok(mut term), Ok(mut interrupt)) => {
                    tokio::select! {
                        _ = term.recv() => {}
                        _ = interrupt.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::EnvFilter;

    /// The caps make nothing more verbose: the subscriber's level stays
    /// `RUST_LOG`'s, so disabled levels stay one comparison away.
    #[test]
    fn the_caps_leave_the_subscribers_level_as_rust_log_sets_it() {
        use tracing::Subscriber;
        for (rust_log, level) in [
            ("info", LevelFilter::INFO),
            ("warn,grundy_server=debug", LevelFilter::DEBUG),
            ("trace", LevelFilter::TRACE),
        ] {
            let filter = EnvFilter::new(rust_log);
            let caps = caps_within(filter.max_level_hint());
            let subscriber = tracing_subscriber::registry().with(filter).with(caps);
            assert_eq!(
                subscriber.max_level_hint(),
                Some(level),
                "RUST_LOG={rust_log}"
            );
        }
    }

    #[test]
    fn the_caps_hold_the_libraries_that_print_frames_below_trace() {
        let caps = caps_within(Some(LevelFilter::TRACE));
        for (target, level) in CAPPED_TARGETS {
            assert!(caps.would_enable(target, level));
            assert!(
                !caps.would_enable(target, &tracing::Level::TRACE),
                "{target}"
            );
        }
    }
}
