//! A certificate from PEM files (`--tls-cert`, `--tls-key`). Read and
//! checked at start: a file that is missing, unreadable, expired (or not
//! valid yet) or that does not match its key stops the server, the file
//! named. Read again when either file changes (its modification time,
//! looked at every few seconds: a renewal tool replaces the files and need
//! not tell anyone) or on SIGHUP; a bad file then leaves the certificate in
//! use as it is, and the log says why.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;
use x509_cert::der::Decode;

use super::current::CurrentCertificate;

/// A certificate or key that cannot be served, its file named.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    #[error("cannot use the TLS certificate {}: {message}", path.display())]
    Certificate { path: PathBuf, message: String },
    #[error("cannot use the TLS key {}: {message}", path.display())]
    Key { path: PathBuf, message: String },
    #[error("the TLS certificate {} does not match the key {}", cert.display(), key.display())]
    Mismatch { cert: PathBuf, key: PathBuf },
    #[error("the TLS certificate {} expired on {not_after}", path.display())]
    Expired { path: PathBuf, not_after: String },
    #[error("the TLS certificate {} is not valid before {not_before}", path.display())]
    NotValidYet { path: PathBuf, not_before: String },
}

/// The certificate and key files, and the certificate read from them.
#[derive(Debug)]
pub struct CertificateFiles {
    cert: PathBuf,
    key: PathBuf,
    current: Arc<CurrentCertificate>,
    /// The files' modification times and lengths when last read.
    seen: Mutex<Stamp>,
}

/// A file's modification time and length: the length too, because two
/// writes within one tick of the file system's clock share a time.
type Stamp = [Option<(SystemTime, u64)>; 2];

impl CertificateFiles {
    /// Reads and checks the certificate chain in `cert` and its key in `key`.
    pub fn open(cert: &Path, key: &Path) -> Result<Arc<CertificateFiles>, CertificateError> {
        let seen = stamp(cert, key);
        let loaded = load(cert, key, SystemTime::now())?;
        Ok(Arc::new(CertificateFiles {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            current: CurrentCertificate::new(loaded),
            seen: Mutex::new(seen),
        }))
    }

    /// What the TLS port presents.
    pub fn current(&self) -> Arc<CurrentCertificate> {
        self.current.clone()
    }

    /// Reads the files again: a good certificate is presented from now on;
    /// a bad one leaves the one in use, and the log says why.
    pub fn reload(&self) -> Result<(), CertificateError> {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = stamp(&self.cert, &self.key);
        match load(&self.cert, &self.key, SystemTime::now()) {
            Ok(key) => {
                self.current.replace(key);
                tracing::info!("TLS certificate reloaded from {}", self.cert.display());
                Ok(())
            }
            Err(e) => {
                tracing::warn!("{e}; the certificate in use stays");
                Err(e)
            }
        }
    }

    /// Reloads whenever either file's modification time changes, looked at
    /// every `every`, until `stop`.
    pub async fn watch(self: Arc<Self>, every: Duration, stop: CancellationToken) {
        loop {
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                _ = stop.cancelled() => return,
            }
            let now = stamp(&self.cert, &self.key);
            let changed = *self.seen.lock().unwrap_or_else(|p| p.into_inner()) != now;
            if changed {
                let _ = self.reload();
            }
        }
    }
}

fn stamp(cert: &Path, key: &Path) -> Stamp {
    let of = |p: &Path| {
        let meta = std::fs::metadata(p).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    };
    [of(cert), of(key)]
}

/// The chain in `cert` and the key in `key`, checked at `now`.
fn load(cert: &Path, key: &Path, now: SystemTime) -> Result<Arc<CertifiedKey>, CertificateError> {
    let bad_cert = |message: String| CertificateError::Certificate {
        path: cert.to_path_buf(),
        message,
    };
    let bad_key = |message: String| CertificateError::Key {
        path: key.to_path_buf(),
        message,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| bad_cert(pem_error(e)))?;
    let Some(leaf) = chain.first() else {
        return Err(bad_cert(
            "holds no certificate (PEM: -----BEGIN CERTIFICATE-----)".into(),
        ));
    };
    check_validity(leaf, cert, now)?;
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| match e {
        pem::Error::NoItemsFound => bad_key(
            "holds no private key (PEM: -----BEGIN PRIVATE KEY-----, or an RSA or EC key)".into(),
        ),
        e => bad_key(pem_error(e)),
    })?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, private, &provider)
        .map(Arc::new)
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(_) => CertificateError::Mismatch {
                cert: cert.to_path_buf(),
                key: key.to_path_buf(),
            },
            e => bad_key(e.to_string()),
        })
}

fn pem_error(e: pem::Error) -> String {
    match e {
        pem::Error::Io(io) => io.to_string(),
        e => format!("not PEM: {e}"),
    }
}

/// Whether the certificate `der` (from the file `path`) is valid at `now`.
fn check_validity(der: &[u8], path: &Path, now: SystemTime) -> Result<(), CertificateError> {
    let cert =
        x509_cert::Certificate::from_der(der).map_err(|e| CertificateError::Certificate {
            path: path.to_path_buf(),
            message: format!("not an X.509 certificate: {e}"),
        })?;
    let validity = cert.tbs_certificate.validity;
    let now = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    if now > validity.not_after.to_unix_duration() {
        return Err(CertificateError::Expired {
            path: path.to_path_buf(),
            not_after: validity.not_after.to_string(),
        });
    }
    if now < validity.not_before.to_unix_duration() {
        return Err(CertificateError::NotValidYet {
            path: path.to_path_buf(),
            not_before: validity.not_before.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A certificate for `localhost` valid over `days` from now (negative:
    /// in the past), and its key, as PEM.
    fn certificate(days: std::ops::Range<i64>) -> (String, String) {
        grundy_testkit::tls::TestCa::new("files test CA").issue(&["localhost"], days)
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_good_pair_loads_and_each_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = certificate(-1..30);
        let (cert_file, key_file) = (
            write(dir.path(), "cert.pem", &cert),
            write(dir.path(), "key.pem", &key),
        );
        let files = CertificateFiles::open(&cert_file, &key_file).expect("a good pair");
        assert_eq!(files.current().get().cert.len(), 1);

        let err = CertificateFiles::open(&dir.path().join("none.pem"), &key_file).unwrap_err();
        assert!(err.to_string().contains("none.pem"), "{err}");

        let (_, other_key) = certificate(-1..30);
        let other = write(dir.path(), "other-key.pem", &other_key);
        let err = CertificateFiles::open(&cert_file, &other).unwrap_err();
        assert!(matches!(err, CertificateError::Mismatch { .. }), "{err}");
        assert!(err.to_string().contains("other-key.pem"), "{err}");

        let (old, old_key) = certificate(-30..-1);
        let old = write(dir.path(), "old.pem", &old);
        let old_key = write(dir.path(), "old-key.pem", &old_key);
        let err = CertificateFiles::open(&old, &old_key).unwrap_err();
        assert!(matches!(err, CertificateError::Expired { .. }), "{err}");
        assert!(err.to_string().contains("old.pem"), "{err}");

        let err = CertificateFiles::open(&key_file, &key_file).unwrap_err();
        assert!(err.to_string().contains("no certificate"), "{err}");
        let err = CertificateFiles::open(&cert_file, &cert_file).unwrap_err();
        assert!(err.to_string().contains("no private key"), "{err}");
    }

    #[test]
    fn a_bad_reload_keeps_the_certificate_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = certificate(-1..30);
        let cert_file = write(dir.path(), "cert.pem", &cert);
        let key_file = write(dir.path(), "key.pem", &key);
        let files = CertificateFiles::open(&cert_file, &key_file).unwrap();
        let before = files.current().get();
        // A new certificate whose key has not been written yet.
        let (new_cert, new_key) = certificate(-1..30);
        write(dir.path(), "cert.pem", &new_cert);
        assert!(files.reload().is_err());
        assert!(Arc::ptr_eq(&before, &files.current().get()));
        write(dir.path(), "key.pem", &new_key);
        files.reload().expect("the new pair");
        assert_ne!(files.current().get().cert, before.cert);
    }

    #[tokio::test]
    async fn a_changed_file_is_read_again_while_the_watch_runs() {
        let dir = tempfile::tempdir().unwrap();
        let ca = grundy_testkit::tls::TestCa::new("watch test CA");
        let (cert, key) = ca.issue(&["localhost"], -1..30);
        let cert_file = write(dir.path(), "cert.pem", &cert);
        let key_file = write(dir.path(), "key.pem", &key);
        let files = CertificateFiles::open(&cert_file, &key_file).unwrap();
        let before = files.current().get();
        let stop = CancellationToken::new();
        let watching = tokio::spawn(files.clone().watch(Duration::from_millis(20), stop.clone()));
        let (new_cert, new_key) = ca.issue(&["localhost", "grundy.test"], -1..30);
        write(dir.path(), "key.pem", &new_key);
        write(dir.path(), "cert.pem", &new_cert);
        let replaced = tokio::time::timeout(Duration::from_secs(10), async {
            while Arc::ptr_eq(&before, &files.current().get()) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
        replaced.await.expect("the new certificate within 10 s");
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(10), watching)
            .await
            .expect("the watch stops")
            .unwrap();
    }
}
