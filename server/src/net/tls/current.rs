//! The certificate the TLS port presents, which can be replaced while the
//! server runs: a certificate source (the files of `--tls-cert` and
//! `--tls-key`, `files.rs`; an ACME client would be another) puts a new one
//! here, and every handshake from then on presents it. Connections made
//! before keep theirs.

use std::sync::{Arc, RwLock};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

#[derive(Debug)]
pub struct CurrentCertificate {
    key: RwLock<Arc<CertifiedKey>>,
}

impl CurrentCertificate {
    pub fn new(key: Arc<CertifiedKey>) -> Arc<CurrentCertificate> {
        Arc::new(CurrentCertificate {
            key: RwLock::new(key),
        })
    }

    /// The certificate handshakes present from now on.
    pub fn replace(&self, key: Arc<CertifiedKey>) {
        // A poisoned lock still holds a whole certificate.
        *self.key.write().unwrap_or_else(|p| p.into_inner()) = key;
    }

    pub fn get(&self) -> Arc<CertifiedKey> {
        self.key.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl ResolvesServerCert for CurrentCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.get())
    }
}
