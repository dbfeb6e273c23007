//! What a `wss://` connection trusts, and why a TLS connection failed, said
//! for a person.
//!
//! A [`Trust`] holds the roots: Mozilla's (built in, so that a static binary
//! in an empty container still knows the public authorities), the system's,
//! and a private CA read from a PEM file (`--ca-cert FILE` or
//! `GRUNDY_CA_CERT`). A binary sets the process's trust once, from its flags
//! ([`set_trust`]); every connection takes it from there ([`trust`]), so that
//! the many places that connect need not carry it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{CertificateError, ClientConfig, RootCertStore};

/// The roots a `wss://` connection verifies its server against.
#[derive(Clone, Debug)]
pub struct Trust {
    config: Arc<ClientConfig>,
}

/// A CA file that cannot be used, named.
#[derive(Debug, thiserror::Error)]
#[error("the CA certificate {}: {message}", path.display())]
pub struct TrustError {
    pub path: PathBuf,
    pub message: String,
}

impl Trust {
    /// The public roots: Mozilla's and the system's.
    pub fn public() -> Trust {
        static PUBLIC: OnceLock<Trust> = OnceLock::new();
        PUBLIC
            .get_or_init(|| Trust::from_roots(public_roots().clone()))
            .clone()
    }

    /// The public roots and the CA certificates (PEM) in `path`.
    pub fn with_ca_file(path: &Path) -> Result<Trust, TrustError> {
        let named = |message: String| TrustError {
            path: path.to_path_buf(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| named(e.to_string()))?;
        let certs = CertificateDer::pem_slice_iter(&bytes)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| named(format!("not PEM: {e}")))?;
        if certs.is_empty() {
            return Err(named(
                "holds no certificate (a PEM file with -----BEGIN CERTIFICATE-----)".into(),
            ));
        }
        let mut roots = public_roots().clone();
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| named(format!("not a usable CA certificate: {e}")))?;
        }
        Ok(Trust::from_roots(roots))
    }

    fn from_roots(roots: RootCertStore) -> Trust {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Trust {
            config: Arc::new(config),
        }
    }

    /// The rustls configuration a connection is made with.
    pub fn config(&self) -> Arc<ClientConfig> {
        self.config.clone()
    }
}

/// Mozilla's roots and the system's (read once; a system store that cannot
/// be read leaves Mozilla's).
fn public_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let system = rustls_native_certs::load_native_certs();
        let (added, _ignored) = roots.add_parsable_certificates(system.certs);
        tracing::debug!(
            "{added} system root certificates ({} errors reading the store)",
            system.errors.len()
        );
        roots
    })
}

static PROCESS_TRUST: RwLock<Option<Trust>> = RwLock::new(None);

/// Makes `trust` what this process's connections verify servers against.
pub fn set_trust(trust: Trust) {
    *PROCESS_TRUST.write().unwrap_or_else(|p| p.into_inner()) = Some(trust);
}

/// What this process's connections verify servers against: the trust set
/// with [`set_trust`], else [`Trust::public`].
pub fn trust() -> Trust {
    PROCESS_TRUST
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_else(Trust::public)
}

/// Sets the process's trust from a `--ca-cert` flag (or `GRUNDY_CA_CERT`):
/// the public roots and that file's CA; without one, nothing changes.
pub fn trust_ca_file(path: Option<&Path>) -> Result<(), TrustError> {
    if let Some(path) = path {
        set_trust(Trust::with_ca_file(path)?);
    }
    Ok(())
}

/// What a failed TLS handshake with `host` means, for a person.
pub fn explain(error: &rustls::Error, host: &str) -> String {
    use rustls::Error as E;
    match error {
        E::InvalidCertificate(cert) => explain_certificate(cert, host),
        E::InvalidMessage(_)
        | E::InappropriateMessage { .. }
        | E::InappropriateHandshakeMessage { .. } => {
            format!("the server at {host} does not speak TLS (for a server without TLS use ws://)")
        }
        E::AlertReceived(alert) => {
            format!("the server at {host} refused the TLS handshake ({alert:?})")
        }
        E::NoCertificatesPresented => format!("the server at {host} presented no certificate"),
        other => format!("TLS with {host} failed: {other}"),
    }
}

const GIVE_CA: &str = "a server with a private CA needs --ca-cert FILE or GRUNDY_CA_CERT";

fn explain_certificate(error: &CertificateError, host: &str) -> String {
    use CertificateError as C;
    match error {
        C::UnknownIssuer => format!(
            "the certificate of {host} is not trusted: it is signed by an authority this \
             client does not know ({GIVE_CA})"
        ),
        C::BadSignature => format!(
            "the certificate of {host} is not trusted: its signature does not verify ({GIVE_CA})"
        ),
        C::NotValidForName => format!("the certificate of {host} is for another name"),
        C::NotValidForNameContext { presented, .. } => {
            let names: Vec<&str> = presented.iter().map(|n| plain_name(n)).collect();
            format!(
                "the certificate of {host} is for another name: it names {}",
                names.join(", ")
            )
        }
        C::Expired | C::ExpiredContext { .. } => {
            format!("the certificate of {host} has expired")
        }
        C::NotValidYet | C::NotValidYetContext { .. } => {
            format!("the certificate of {host} is not valid yet")
        }
        C::Revoked => format!("the certificate of {host} has been revoked"),
        other => format!("the certificate of {host} is not accepted: {other:?}"),
    }
}

/// A name as rustls presents it (`DnsName("example.org")`), as people write it.
fn plain_name(presented: &str) -> &str {
    presented
        .split_once("(\"")
        .and_then(|(_, rest)| rest.strip_suffix("\")"))
        .unwrap_or(presented)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_file_that_cannot_be_used_is_named_with_why() {
        let dir = std::env::temp_dir().join(format!("grundy-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.pem");
        let err = Trust::with_ca_file(&missing).unwrap_err().to_string();
        assert!(err.contains("missing.pem"), "{err}");
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        let err = Trust::with_ca_file(&empty).unwrap_err().to_string();
        assert!(
            err.contains("empty.pem") && err.contains("no certificate"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn certificate_failures_say_what_failed() {
        let host = "grundy.example:443";
        let says = |e: CertificateError| explain(&rustls::Error::InvalidCertificate(e), host);
        assert!(says(CertificateError::UnknownIssuer).contains("not trusted"));
        assert!(says(CertificateError::UnknownIssuer).contains("--ca-cert"));
        assert!(says(CertificateError::Expired).contains("expired"));
        assert!(says(CertificateError::NotValidForName).contains("another name"));
        assert_eq!(plain_name("DnsName(\"example.org\")"), "example.org");
        assert_eq!(plain_name("example.org"), "example.org");
        let plain = explain(
            &rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
            host,
        );
        assert!(plain.contains("does not speak TLS"), "{plain}");
    }
}
