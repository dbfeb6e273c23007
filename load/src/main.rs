//! `grundy-load`: the load tool. `run` puts a Grundy server (or the
//! `grundy-echo` baseline) under load and measures it; `idle` holds idle
//! connections open and reports the memory they cost. See docs/performance.md;
//! scripts/bench.sh runs the whole benchmark.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use grundy_load::load;
use serde_json::json;

/// The Grundy load tool: Nim duels, echo and relay rounds, idle connections.
#[derive(Parser)]
#[command(name = "grundy-load", version)]
struct Cli {
    /// The server's WebSocket address; or a cluster's nodes, separated by
    /// commas (connection n goes to node n modulo their number: the two
    /// players of a match are on different nodes).
    #[arg(long, global = true, default_value = "ws://127.0.0.1:7878")]
    server: String,
    /// Trust the CA certificate(s) in this PEM file for a `wss://` server,
    /// beside the public roots (a server with a private CA).
    #[arg(long, global = true, env = "GRUNDY_CA_CERT", value_name = "FILE")]
    ca_cert: Option<std::path::PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load test: C concurrent Nim duels (or echo or relay rounds with --echo,
    /// --relay) for a while; prints one line: matches=C moves_per_s=...
    /// p50_ms=... p99_ms=... max_ms=... errors=... server_us_per_move=...
    /// load_us_per_move=... load_cores=... A server under load test
    /// needs its rate limit raised (grundy-server --messages-per-second
    /// 1000000 --burst 1000000); scripts/bench.sh does it all.
    Run(LoadArgs),
    /// Idle connections: N connections say hello, list the rooms and stay idle;
    /// with --server-pid, reports the server's RSS per connection.
    Idle(IdleArgs),
}

#[derive(Args)]
struct LoadArgs {
    /// Concurrent matches (two connections each).
    #[arg(long, default_value_t = 1)]
    matches: usize,
    /// Seconds measured (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds played before measuring.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Local addresses to connect from, round robin, e.g. 127.0.0.1-127.0.0.20
    /// (each allows about 28,000 connections to one server port).
    #[arg(long)]
    source_ips: Option<String>,
    /// Echo round trips against `grundy-echo` instead of Nim duels.
    #[arg(long)]
    echo: bool,
    /// Relay rounds against `grundy-echo` (one frame in, one back to the sender
    /// and one to the other connection of the pair) instead of Nim duels.
    #[arg(long, conflicts_with = "echo")]
    relay: bool,
    /// The server's process id: its CPU per move over the window is reported
    /// (server_us_per_move), beside the load tool's own.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct IdleArgs {
    /// How many connections.
    #[arg(long, default_value_t = 1000)]
    connections: usize,
    /// Seconds to hold them once all are open.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Local addresses to connect from, round robin, e.g. 127.0.0.1-127.0.0.20.
    #[arg(long)]
    source_ips: Option<String>,
    /// The server's process id: its RSS is read before and with every connection open.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Against `grundy-echo`: each connection sends one frame and reads its echo.
    #[arg(long)]
    echo: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The same allocator as grundy-server (see there), so that the load tool and
/// the echo baseline are measured on equal terms.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    grundy_client::tls::trust_ca_file(cli.ca_cert.as_deref())?;
    match cli.command {
        Command::Run(args) => load(&cli.server, args).await,
        Command::Idle(args) => idle(&cli.server, args).await,
    }
}

fn seconds(flag: &str, s: f64) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("{flag}: not a duration: {s}"))
}

async fn target(url: &str, source_ips: Option<&str>) -> Result<load::Target> {
    let sources = match source_ips {
        Some(range) => load::parse_source_ips(range)?,
        None => Vec::new(),
    };
    Ok(load::Target::new(url, sources).await?)
}

async fn load(url: &str, args: LoadArgs) -> Result<()> {
    if args.matches == 0 {
        bail!("--matches must be at least 1");
    }
    let plan = load::LoadPlan {
        mode: if args.echo {
            load::Mode::Echo
        } else if args.relay {
            load::Mode::Relay
        } else {
            load::Mode::Nim
        },
        matches: args.matches,
        duration: seconds("--duration", args.duration)?,
        warmup: seconds("--warmup", args.warmup)?,
    };
    let target = target(url, args.source_ips.as_deref()).await?;
    let summary = load::run(&target, &plan, args.server_pid).await?;
    if args.json {
        println!("{}", summary.json());
    } else {
        println!("{}", summary.line());
    }
    Ok(())
}

async fn idle(url: &str, args: IdleArgs) -> Result<()> {
    let target = target(url, args.source_ips.as_deref()).await?;
    let hold = seconds("--duration", args.duration)?;
    let mode = if args.echo {
        load::Mode::Echo
    } else {
        load::Mode::Nim
    };
    let report = load::idle(&target, mode, args.connections, hold, args.server_pid).await;
    if args.json {
        println!("{}", json!(report));
    } else {
        println!("{}", report.line());
    }
    Ok(())
}
