//! Certificates obtained over ACME (`--acme-domain`, RFC 8555), from Let's
//! Encrypt or any other directory (`--acme-directory`). rustls-acme does
//! the protocol: it answers the TLS-ALPN-01 challenge (RFC 8737) on the TLS
//! port itself, so that nothing else need listen, keeps the account key and
//! the certificate in `--acme-cache` (a restart serves the cached
//! certificate at once and orders nothing), and orders a new certificate
//! when two thirds of the current one's lifetime have passed.
//!
//! A failure (the directory unreachable, a challenge refused, the cache
//! unwritable) is logged with its reason and the order tried again after a
//! backoff (1 s, doubling up to about 18 h); the server keeps running and
//! keeps the certificate it has. Until the first certificate is there (none
//! cached), TLS handshakes fail: there is nothing to present.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::StreamExt;
use rustls::server::ResolvesServerCert;
use rustls::ClientConfig;
use rustls_acme::caches::DirCache;
use rustls_acme::{AcmeConfig, AcmeState, EventOk};
use tokio_util::sync::CancellationToken;

/// Let's Encrypt's production directory: the default of `--acme-directory`.
pub const LETS_ENCRYPT: &str = rustls_acme::acme::LETS_ENCRYPT_PRODUCTION_DIRECTORY;

/// The ALPN protocol of a TLS-ALPN-01 validation: a handshake that
/// negotiates it is the directory checking this server, never a client.
pub const ACME_TLS_ALPN: &[u8] = rustls_acme::acme::ACME_TLS_ALPN_NAME;

/// What ACME is asked for, and where.
pub struct AcmeSettings {
    /// The names the certificate is for (each validated by the directory
    /// connecting to it on port 443, or on the port it is set up to use).
    pub domains: Vec<String>,
    /// The account's contacts, `mailto:` URLs.
    pub contact: Vec<String>,
    /// The directory's URL.
    pub directory: String,
    /// Where the account key and the certificate are kept.
    pub cache: PathBuf,
    /// What the directory's own TLS certificate is checked against
    /// (`--acme-directory-ca` for a test directory; else the public roots).
    pub directory_trust: Arc<ClientConfig>,
}

/// A cache directory that cannot be made or used, named.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the ACME cache directory {}: {message}", path.display())]
pub struct AcmeCacheError {
    pub path: PathBuf,
    pub message: String,
}

/// The certificates ACME obtains: what the TLS port presents, and the task
/// that orders and renews them.
pub struct Acme {
    state: AcmeState<std::io::Error>,
}

impl Acme {
    /// Makes the cache directory (only its owner may read it: it holds the
    /// account's and the certificate's private keys) and sets up the
    /// orders; nothing is asked of the directory before [`Acme::run`].
    pub fn new(settings: AcmeSettings) -> Result<Acme, AcmeCacheError> {
        private_dir(&settings.cache).map_err(|e| AcmeCacheError {
            path: settings.cache.clone(),
            message: e.to_string(),
        })?;
        let state = AcmeConfig::new_with_client_config(&settings.domains, settings.directory_trust)
            .contact(&settings.contact)
            .directory(&settings.directory)
            .cache(DirCache::new(settings.cache))
            .state();
        Ok(Acme { state })
    }

    /// What handshakes present: the certificate obtained (none before the
    /// first), or to a TLS-ALPN-01 validation its challenge certificate.
    pub fn resolver(&self) -> Arc<dyn ResolvesServerCert> {
        self.state.resolver()
    }

    /// Orders, deploys, caches and renews certificates until `stop`,
    /// logging each step and each failure with its reason.
    pub async fn run(self, stop: CancellationToken) {
        let mut state = self.state;
        loop {
            let event = tokio::select! {
                event = state.next() => event,
                _ = stop.cancelled() => return,
            };
            match event {
                Some(Ok(EventOk::DeployedCachedCert)) => {
                    tracing::info!("ACME: serving the certificate from the cache")
                }
                Some(Ok(EventOk::DeployedNewCert)) => {
                    tracing::info!("ACME: obtained a new certificate, serving it")
                }
                Some(Ok(EventOk::CertCacheStore)) => {
                    tracing::debug!("ACME: the certificate is cached")
                }
                Some(Ok(EventOk::AccountCacheStore)) => {
                    tracing::debug!("ACME: the account key is cached")
                }
                Some(Err(e)) => tracing::warn!(
                    "ACME failed: {e}; trying again after a backoff \
                     (1 s, doubling up to about 18 h)"
                ),
                // The state is an endless stream; an end would be a change
                // of the library, and is said rather than spun on.
                None => {
                    tracing::error!("ACME: the order stream ended; no renewals from now on");
                    return;
                }
            }
        }
    }
}

/// Makes `dir` if missing, readable by its owner only.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    // A file in the way, or a directory we cannot write, is said now rather
    // than at the first order.
    let probe = dir.join(".grundy-write-check");
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}
