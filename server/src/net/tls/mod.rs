//! TLS on the server's port (`--tls-cert`, `--tls-key`): the web app, the
//! HTTP API and the WebSocket all behind it, a connection's HTTP served as
//! on a plain port once its handshake is done. The handshake is bounded by
//! `hello_timeout_ms`, as a request head is.
//!
//! The certificate comes from the files of `--tls-cert` (`files.rs`: a
//! [`CurrentCertificate`], replaced when the files change) or from ACME
//! (`acme.rs`, `--acme-domain`: obtained and renewed by the server itself).
//!
//! A client that speaks plain HTTP to this port is answered in plain HTTP:
//! a 400 that says to use `https://` or `wss://`.

pub mod acme;
pub mod current;
pub mod files;

use std::sync::Arc;
use std::time::Duration;

use rustls::server::ResolvesServerCert;
use rustls::ServerConfig;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

pub use current::CurrentCertificate;
pub use files::{CertificateError, CertificateFiles};

use crate::tcp::drain;

/// The first byte of every TLS connection: a handshake record.
const HANDSHAKE_RECORD: u8 = 0x16;

/// What a plain HTTP request to the TLS port is answered.
const PLAIN_TO_TLS: &str = "this port speaks TLS: use https:// (wss:// for the WebSocket)\n";

/// The value of the `Strict-Transport-Security` header every HTTP answer
/// over TLS carries: browsers keep to https:// for a year.
pub const HSTS: &str = "max-age=31536000";

/// The server's side of TLS.
pub struct Tls {
    acceptor: TlsAcceptor,
}

impl Tls {
    /// TLS presenting whatever certificate `certificates` resolves.
    pub fn new(certificates: Arc<dyn ResolvesServerCert>) -> Arc<Tls> {
        Tls::with_alpn(certificates, Vec::new())
    }

    /// TLS presenting the certificates ACME obtains (`acme.rs`), and
    /// answering its TLS-ALPN-01 validations: those negotiate
    /// `acme-tls/1`, clients `http/1.1` (the one HTTP this port speaks).
    pub fn with_acme(certificates: Arc<dyn ResolvesServerCert>) -> Arc<Tls> {
        Tls::with_alpn(
            certificates,
            vec![b"http/1.1".to_vec(), acme::ACME_TLS_ALPN.to_vec()],
        )
    }

    fn with_alpn(certificates: Arc<dyn ResolvesServerCert>, alpn: Vec<Vec<u8>>) -> Arc<Tls> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_cert_resolver(certificates);
        config.alpn_protocols = alpn;
        Arc::new(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// The TLS handshake of a new connection, within `limit`. None if it
    /// failed (logged), or if the client spoke plain HTTP (then answered).
    pub async fn handshake(&self, tcp: TcpStream, limit: Duration) -> Option<TlsStream<TcpStream>> {
        let deadline = Instant::now() + limit;
        let mut first = [0u8; 1];
        match timeout_at(deadline, tcp.peek(&mut first)).await {
            Ok(Ok(1)) => {}
            // Closed, broken or silent: nothing to answer.
            _ => return None,
        }
        if first[0] != HANDSHAKE_RECORD {
            tracing::debug!("a client spoke plain to the TLS port; answered with a 400");
            answer_plain(tcp).await;
            return None;
        }
        match timeout_at(deadline, self.acceptor.accept(tcp)).await {
            Ok(Ok(mut tls)) if tls.get_ref().1.alpn_protocol() == Some(acme::ACME_TLS_ALPN) => {
                // The handshake was the validation; it asks nothing more.
                tracing::info!("ACME: answered a TLS-ALPN-01 validation");
                let _ = tokio::time::timeout(Duration::from_secs(1), tls.shutdown()).await;
                None
            }
            Ok(Ok(tls)) => Some(tls),
            Ok(Err(e)) => {
                tracing::debug!("TLS handshake failed: {e}");
                None
            }
            Err(_) => {
                tracing::debug!("no TLS handshake within {limit:?}");
                None
            }
        }
    }
}

/// Answers a plain HTTP request on the TLS port with a 400 that says why,
/// written whole in one go so that the client reads it with its response
/// head, then closes so that the answer is not lost to a reset.
async fn answer_plain(mut tcp: TcpStream) {
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{PLAIN_TO_TLS}",
        PLAIN_TO_TLS.len()
    );
    let written = tokio::time::timeout(Duration::from_secs(1), tcp.write_all(answer.as_bytes()));
    if let Ok(Ok(())) = written.await {
        drain(&mut tcp).await;
    }
}
