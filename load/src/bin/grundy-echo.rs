//! `grundy-echo`: the baseline for load tests. A minimal WebSocket echo server
//! (tokio-tungstenite, with the Grundy server's WebSocket settings): what this
//! stack does at best, to compare `grundy-server` with (`grundy-load run --echo`).

use std::net::SocketAddr;

use anyhow::Context;
use clap::Parser;

#[derive(Parser)]
#[command(name = "grundy-echo", version)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:7879")]
    listen: SocketAddr,
}

/// The same allocator as grundy-server (see there), so that the load tool and
/// the echo baseline are measured on equal terms.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    println!("listening on ws://{}", listener.local_addr()?);
    grundy_load::baseline::serve(listener).await;
    Ok(())
}
