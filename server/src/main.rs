//! `grundy-server`: the match server.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use grundy_server::cluster::bus::Bus;
use grundy_server::net::redirect;
use grundy_server::net::tls::acme::{Acme, AcmeSettings};
use grundy_server::net::tls::{CertificateFiles, Tls};
use grundy_server::secret::url_without_password;
use grundy_server::server::Listener;
use grundy_server::settings::flags::{Flags, ServeArgs};
use grundy_server::settings::{LogFormat, Settings};
use grundy_server::store::{MatchStore, PgStore, SqliteStore, StoreError};
use grundy_server::Server;

/// Every message and event allocates a little; glibc's per-thread arenas grow
/// and shrink under that churn (a tenth of the workers' time under load went to
/// it), mimalloc keeps it to thread-local free lists.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The Grundy match server: hosts matches of every game in the catalogue over
/// WebSocket (protocol v1), keeps every match in SQLite (or PostgreSQL), and
/// brings unfinished matches back after a restart.
///
/// Every flag is also a key of the `--config` file and an environment
/// variable (`GRUNDY_` and the flag's name); flags override variables,
/// which override the file (docs/deploy.md, "Configuration").
#[derive(Parser)]
#[command(
    name = "grundy-server",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

#[derive(clap::Subcommand)]
enum Command {
    /// The configuration file and what it makes.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Copy an SQLite database, consistent as of one moment, while a server
    /// serves it (docs/deploy.md, "Backup and restore").
    Backup(BackupArgs),
}

#[derive(clap::Args)]
struct BackupArgs {
    /// The configuration file whose `db` is copied.
    #[arg(long, value_name = "FILE", env = "GRUNDY_CONFIG")]
    config: Option<PathBuf>,
    /// The database to copy (an SQLite file), over the file's `db`.
    #[arg(long, env = "GRUNDY_DB")]
    db: Option<String>,
    /// Where the copy goes: a file that is not there yet.
    #[arg(long, value_name = "FILE")]
    to: PathBuf,
    /// Replace `--to` if it is there.
    #[arg(long)]
    overwrite: bool,
}

#[derive(clap::Subcommand)]
enum ConfigCommand {
    /// Print the effective configuration (file, environment and flags
    /// over the defaults) as TOML, passwords masked, and exit; or say what
    /// is wrong and exit 1.
    Check(Box<ServeArgs>),
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

/// The settings `args` and their file make, or the refusal said.
fn load_settings(args: &ServeArgs) -> Result<Settings, ExitCode> {
    Settings::load(args.config.as_deref(), &args.flags).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

async fn run() -> anyhow::Result<ExitCode> {
    // The flags and the file first: a bad one is said before anything is
    // logged.
    // Any refusal exits 1, a flag's or variable's as the file's: whoever
    // runs `config check` needs one code for "this would not start".
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            let _ = e.print();
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => e.exit(),
    };
    let serve = match cli.command {
        None => cli.serve,
        Some(Command::Backup(args)) => return Ok(backup(args)),
        Some(Command::Config(ConfigCommand::Check(args))) => {
            return Ok(match load_settings(&args) {
                Ok(settings) => {
                    print!("{}", settings.masked().to_toml());
                    ExitCode::SUCCESS
                }
                Err(code) => code,
            });
        }
    };
    let settings = match load_settings(&serve) {
        Ok(settings) => settings,
        Err(code) => return Ok(code),
    };
    init_logging(settings.log_format, settings.log_frames);
    // The address first: a port in use must not leave a new database behind.
    let listener = match tokio::net::TcpListener::bind(settings.listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", settings.listen);
            return Ok(ExitCode::FAILURE);
        }
    };
    // The certificate before the database, as the address: a bad file must
    // not leave a new database behind either.
    let certificates = match (&settings.tls_cert, &settings.tls_key) {
        (Some(cert), Some(key)) => match CertificateFiles::open(cert, key) {
            Ok(files) => Some(files),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(ExitCode::FAILURE);
            }
        },
        _ => None,
    };
    let acme = match acme_settings(&settings) {
        Ok(Some(acme_settings)) => match Acme::new(acme_settings) {
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
    let redirect_listener = match settings.http_redirect_port {
        Some(port) => {
            let at = std::net::SocketAddr::new(settings.listen.ip(), port);
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
    let lease = settings
        .cluster
        .then(|| std::time::Duration::from_millis(settings.lease_ms));
    let store = match open_store(&settings.db, lease) {
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
    let config = settings.config();
    let store: Arc<dyn MatchStore> = Arc::from(store);
    if let Some(cluster) = store.cluster() {
        // What maps this process to `room_owners` (also in /metrics and
        // /healthz; a new id is logged if the node joins again).
        tracing::info!(node = %cluster.node(), pid = std::process::id(), "joined the cluster as node {}", cluster.node());
    }
    let bus = match (&settings.bus, store.cluster()) {
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

/// What the `acme_*` settings ask for; None without `acme_domain`. Err:
/// the `acme_directory_ca` file cannot be used.
fn acme_settings(
    settings: &Settings,
) -> Result<Option<AcmeSettings>, grundy_client::tls::TrustError> {
    use grundy_client::tls::Trust;
    if settings.acme_domain.is_empty() {
        return Ok(None);
    }
    let trust = match &settings.acme_directory_ca {
        Some(file) => Trust::with_ca_file(file)?,
        None => Trust::public(),
    };
    Ok(Some(AcmeSettings {
        domains: settings.acme_domain.clone(),
        contact: settings.acme_contact.clone(),
        directory: settings.acme_directory.clone(),
        cache: settings.acme_cache.clone(),
        directory_trust: trust.config(),
    }))
}

/// `grundy-server backup`: the SQLite file copied; a PostgreSQL database is
/// pg_dump's to copy, and the refusal says how.
fn backup(args: BackupArgs) -> ExitCode {
    let given = Flags {
        db: args.db,
        ..Flags::default()
    };
    let settings = match Settings::load(args.config.as_deref(), &given) {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if is_postgres(&settings.db) {
        eprintln!(
            "error: {} is a PostgreSQL database: back it up with pg_dump, e.g.\n  \
             pg_dump --format=custom --file=grundy.dump '{}'\n\
             and restore it with pg_restore (docs/deploy.md, \"Backup and restore\")",
            url_without_password(&settings.db),
            url_without_password(&settings.db),
        );
        return ExitCode::FAILURE;
    }
    let from = Path::new(&settings.db);
    match grundy_server::store::backup::backup(from, &args.to, args.overwrite) {
        Ok(copied) => {
            println!(
                "backed up {} to {} ({} pages, {} bytes)",
                from.display(),
                args.to.display(),
                copied.pages,
                copied.bytes
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn is_postgres(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// A `postgres://` (or `postgresql://`) URL opens PostgreSQL, as a
/// cluster's node when there is a `lease`; anything else is an SQLite file's
/// path (one server's alone).
fn open_store(
    db: &str,
    lease: Option<std::time::Duration>,
) -> Result<Box<dyn MatchStore>, StoreError> {
    match (is_postgres(db), lease) {
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
