//! A shutdown waits for nothing it owes nobody: a client that began an HTTP
//! request and never finished its head (a WebSocket handshake cut short) is
//! owed no answer, and does not hold the server up. (Its own test binary:
//! it reads the process-wide connection gauge.)

use std::time::Duration;

use grundy_tests::{http, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_half_sent_request_does_not_hold_up_a_shutdown() {
    let mut server = TestServer::start().await;
    let mut tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    tcp.write_all(b"GET /ws HTTP/1.1\r\nHost: grundy\r\nUpgrade: websocket\r\n")
        .await
        .expect("write");
    // The server holds it (this connection and the one asking count).
    loop {
        let metrics = http(server.addr, "GET", "/metrics").await;
        let held = metrics
            .body
            .lines()
            .find_map(|l| l.strip_prefix("grundy_connections "))
            .and_then(|v| v.parse::<f64>().ok())
            .expect("the connection gauge");
        if held >= 2.0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    // A request under way may take 5 s to finish; this one is not under way.
    tokio::time::timeout(Duration::from_secs(3), server.stop())
        .await
        .expect("the shutdown does not wait for the rest of the head");
    let mut rest = [0u8; 64];
    let closed = tokio::time::timeout(Duration::from_secs(1), tcp.read(&mut rest)).await;
    assert!(matches!(closed, Ok(Ok(0)) | Ok(Err(_))), "{closed:?}");
}
