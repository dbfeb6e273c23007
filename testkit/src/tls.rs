//! A certificate authority made for a test, and the server certificates it
//! signs, written as PEM files the way a server and its clients are given
//! them (`--tls-cert`, `--tls-key`, `--ca-cert`).

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use time::{Duration, OffsetDateTime};

/// A test CA.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A server certificate's files.
pub struct ServerFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl TestCa {
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        let key = KeyPair::generate().expect("CA key");
        TestCa {
            issuer: CertifiedIssuer::self_signed(params, key).expect("CA certificate"),
        }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// Writes the CA's certificate to `dir/name`.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, self.pem()).expect("write the CA");
        path
    }

    /// A server certificate for `names` (DNS names or IP addresses), valid
    /// from `days.start` to `days.end` days from now, and its key, PEM.
    pub fn issue(&self, names: &[&str], days: std::ops::Range<i64>) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).expect("server params");
        let now = OffsetDateTime::now_utc();
        params.not_before = now + Duration::days(days.start);
        params.not_after = now + Duration::days(days.end);
        let key = KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &self.issuer).expect("signed");
        (cert.pem(), key.serialize_pem())
    }

    /// [`TestCa::issue`] for `localhost` and 127.0.0.1, valid now, written
    /// to `dir/{stem}.pem` and `dir/{stem}-key.pem`.
    pub fn write_server(&self, dir: &Path, stem: &str) -> ServerFiles {
        let (cert, key) = self.issue(&["localhost", "127.0.0.1"], -1..30);
        write_pair(dir, stem, &cert, &key)
    }
}

/// The SHA-256 of the public key (its SubjectPublicKeyInfo) of the PEM
/// private key `key_pem`, base64: the pin Chromium's
/// `--ignore-certificate-errors-spki-list` takes, which makes a browser
/// trust a test certificate without a system trust store.
pub fn spki_pin(key_pem: &str) -> String {
    use base64::Engine;
    use sha2::Digest;
    let key = KeyPair::from_pem(key_pem).expect("a PEM key");
    let digest = sha2::Sha256::digest(rcgen::PublicKeyData::subject_public_key_info(&key));
    base64::engine::general_purpose::STANDARD.encode(digest)
}

/// Writes a certificate and key to `dir/{stem}.pem` and `dir/{stem}-key.pem`.
pub fn write_pair(dir: &Path, stem: &str, cert: &str, key: &str) -> ServerFiles {
    let files = ServerFiles {
        cert: dir.join(format!("{stem}.pem")),
        key: dir.join(format!("{stem}-key.pem")),
    };
    std::fs::write(&files.cert, cert).expect("write the certificate");
    std::fs::write(&files.key, key).expect("write the key");
    files
}
