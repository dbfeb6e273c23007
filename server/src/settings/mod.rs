//! What the operator sets: every flag of `grundy-server`, as a key of the
//! configuration file (TOML, `--config FILE`), an environment variable and a
//! flag, in that order of strength over the built-in defaults
//! (docs/deploy.md, "Configuration").
//!
//! One name throughout: the flag `--max-connections` is the key
//! `max_connections` and the variable `GRUNDY_MAX_CONNECTIONS`. The limits
//! the protocol announces are the file's `[limits]` table, whose keys are the
//! fields of [`Limits`] themselves (serialized, then overlaid): a new limit
//! is a key with no code here, and a flag for it is one field of
//! [`flags::LimitFlags`].
//!
//! The layers are merged as TOML tables: the file is read into [`Settings`]
//! (unknown keys and bad values refused, named with the file's line), and the
//! flags and variables clap read are serialized (what was not given is
//! `None`, which TOML leaves out) and laid over it, then read back.

pub mod flags;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use grundy_protocol::wire::Limits;
use ipnet::IpNet;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::config::Config;

/// The effective settings: built-in defaults, under the file, under the
/// environment and the flags. Field names are the file's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub listen: SocketAddr,
    pub db: String,
    pub cluster: bool,
    pub lease_ms: u64,
    pub bus: Option<String>,
    #[serde(deserialize_with = "ranges")]
    pub trusted_proxy: Vec<IpNet>,
    #[serde(deserialize_with = "ranges")]
    pub unlimited_from: Vec<IpNet>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    pub acme_domain: Vec<String>,
    pub acme_contact: Vec<String>,
    pub acme_directory: String,
    pub acme_directory_ca: Option<PathBuf>,
    pub acme_cache: PathBuf,
    pub http_redirect_port: Option<u16>,
    pub idle_room_secs: u64,
    pub max_queued_bytes: usize,
    pub log_format: LogFormat,
    pub log_frames: bool,
    #[serde(deserialize_with = "limits_over_defaults")]
    pub limits: Limits,
}

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For a person.
    Text,
    /// One JSON object a line, for a log collector.
    Json,
}

/// The lease of a cluster's node, in milliseconds: long enough to outlast a
/// renewal's round trip, short enough that a takeover comes within minutes.
pub const LEASE_MS: std::ops::RangeInclusive<u64> = 200..=600_000;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 7878)),
            db: "./grundy.db".into(),
            cluster: false,
            lease_ms: 5000,
            bus: None,
            trusted_proxy: Vec::new(),
            unlimited_from: Vec::new(),
            tls_cert: None,
            tls_key: None,
            acme_domain: Vec::new(),
            acme_contact: Vec::new(),
            acme_directory: crate::net::tls::acme::LETS_ENCRYPT.into(),
            acme_directory_ca: None,
            acme_cache: "./grundy-acme".into(),
            http_redirect_port: None,
            idle_room_secs: Config::default().idle_room.as_secs(),
            max_queued_bytes: Config::default().max_queued_bytes,
            log_format: LogFormat::Text,
            log_frames: false,
            limits: Config::default().limits,
        }
    }
}

/// Why the settings were refused: the source and the key named.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot read the configuration file {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the configuration file {}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{source_name}: {message}")]
    Given {
        /// The flag and the variable that set the key.
        source_name: String,
        message: String,
    },
}

impl Settings {
    /// The settings from `file` (if any) under `given`: the flags and
    /// environment variables clap read, as a serializable value whose
    /// fields are keys of [`Settings`] and whose `None` is "not given".
    pub fn load(file: Option<&Path>, given: &impl Serialize) -> Result<Settings, SettingsError> {
        let settings = match file {
            None => Settings::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|error| SettingsError::Read {
                    path: path.to_owned(),
                    error,
                })?;
                let file_error = |message: String| SettingsError::File {
                    path: path.to_owned(),
                    message,
                };
                let settings = Settings::from_toml(&text).map_err(file_error)?;
                settings
                    .check()
                    .map_err(|(key, message)| file_error(format!("`{key}`: {message}")))?;
                settings
            }
        };
        let given = toml::Table::try_from(given).map_err(|e| SettingsError::Given {
            source_name: "the flags".into(),
            message: e.to_string(),
        })?;
        let settings = settings.overlaid(given)?;
        settings
            .check()
            .map_err(|(key, message)| SettingsError::Given {
                source_name: source_of(&key),
                message: format!("`{key}`: {message}"),
            })?;
        Ok(settings)
    }

    /// A file's text read over the defaults; a refusal names the key (its
    /// path in the file), the line and what is wrong.
    pub fn from_toml(text: &str) -> Result<Settings, String> {
        let document = toml::Deserializer::parse(text).map_err(|e| e.to_string())?;
        serde_path_to_error::deserialize(document).map_err(|e| {
            let key = e.path().to_string();
            let inner = e.into_inner().to_string();
            if key == "." || inner.contains("unknown field") || inner.contains("`limits.") {
                // The key is in the message already (or is the whole file).
                inner
            } else {
                format!("`{key}`: {inner}")
            }
        })
    }

    /// `given` laid over these settings, key by key (`[limits]` too).
    fn overlaid(&self, given: toml::Table) -> Result<Settings, SettingsError> {
        if given.is_empty() {
            return Ok(self.clone());
        }
        let internal = |e: toml::ser::Error| SettingsError::Given {
            source_name: "the flags".into(),
            message: e.to_string(),
        };
        let mut table = toml::Table::try_from(self).map_err(internal)?;
        for (key, value) in given {
            match (table.get_mut(&key), value) {
                (Some(toml::Value::Table(under)), toml::Value::Table(over)) => under.extend(over),
                (_, value) => {
                    table.insert(key, value);
                }
            }
        }
        serde_path_to_error::deserialize(table).map_err(|e| {
            let key = e.path().to_string();
            SettingsError::Given {
                source_name: source_of(&key),
                message: e.into_inner().to_string(),
            }
        })
    }

    /// What a type cannot say: ranges and keys that go together. A
    /// refusal is the key and what is wrong.
    fn check(&self) -> Result<(), (String, String)> {
        let refuse = |key: &str, message: &str| Err((key.to_owned(), message.to_owned()));
        if !LEASE_MS.contains(&self.lease_ms) {
            return refuse(
                "lease_ms",
                &format!(
                    "{} is out of range {}..={}",
                    self.lease_ms,
                    LEASE_MS.start(),
                    LEASE_MS.end()
                ),
            );
        }
        if self.bus.is_some() && !self.cluster {
            return refuse("bus", "a bus is for a cluster's node: set `cluster` too");
        }
        if self.tls_cert.is_some() != self.tls_key.is_some() {
            return refuse("tls_cert", "`tls_cert` and `tls_key` go together");
        }
        let acme = !self.acme_domain.is_empty();
        if self.tls_cert.is_some() && acme {
            return refuse(
                "acme_domain",
                "a certificate comes from files (`tls_cert`) or over ACME, not both",
            );
        }
        for domain in &self.acme_domain {
            if let Err(e) = parse_domain(domain) {
                return refuse("acme_domain", &e);
            }
        }
        for contact in &self.acme_contact {
            if let Err(e) = parse_contact(contact) {
                return refuse("acme_contact", &e);
            }
        }
        if !acme && !self.acme_contact.is_empty() {
            return refuse(
                "acme_contact",
                "a contact is for ACME: set `acme_domain` too",
            );
        }
        if !acme && self.acme_directory_ca.is_some() {
            return refuse(
                "acme_directory_ca",
                "the directory's CA is for ACME: set `acme_domain` too",
            );
        }
        if self.http_redirect_port.is_some() && self.tls_cert.is_none() && !acme {
            return refuse(
                "http_redirect_port",
                "the redirect is to https://: set `tls_cert` and `tls_key`, or `acme_domain`, too",
            );
        }
        if self.idle_room_secs == 0 {
            return refuse("idle_room_secs", "must be at least 1");
        }
        // The rate limiter and the caps divide by these.
        let limits = &self.limits;
        for (key, value) in [
            (
                "limits.messages_per_second",
                limits.messages_per_second as usize,
            ),
            ("limits.burst", limits.burst as usize),
            ("limits.max_connections", limits.max_connections),
            ("limits.connections_per_ip", limits.connections_per_ip),
        ] {
            if value == 0 {
                return refuse(key, "must be at least 1");
            }
        }
        Ok(())
    }

    /// The server's configuration: the defaults, with these limits and
    /// address lists.
    pub fn config(&self) -> Config {
        Config {
            limits: self.limits.clone(),
            trusted_proxies: self.trusted_proxy.clone(),
            unlimited_from: self.unlimited_from.clone(),
            idle_room: std::time::Duration::from_secs(self.idle_room_secs),
            max_queued_bytes: self.max_queued_bytes,
            ..Config::default()
        }
    }

    /// These settings with every secret replaced by `***`: what may be
    /// printed or logged.
    pub fn masked(&self) -> Settings {
        Settings {
            db: crate::secret::url_without_password(&self.db),
            bus: self.bus.as_deref().map(crate::secret::url_without_password),
            ..self.clone()
        }
    }

    /// As a configuration file (what `config check` prints). Print
    /// [`Settings::masked`], not these.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot be written as TOML: {e}\n"))
    }
}

/// The flag and the variable that set `key` (`limits.burst`: `--burst`).
pub fn source_of(key: &str) -> String {
    let name = key.rsplit('.').next().unwrap_or(key);
    format!("--{} or {}", name.replace('_', "-"), flags::env_name(name))
}

/// A list of addresses and CIDR ranges, each read as `--trusted-proxy` reads it.
fn ranges<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<IpNet>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|s| parse_range(s).map_err(D::Error::custom))
        .collect()
}

/// A name a certificate can be ordered for: a DNS name, not an address.
pub fn parse_domain(s: &str) -> Result<String, String> {
    use rustls::pki_types::ServerName;
    match ServerName::try_from(s) {
        Ok(ServerName::DnsName(name)) => Ok(name.as_ref().to_ascii_lowercase()),
        Ok(_) => Err(format!(
            "{s:?} is an address; a certificate over ACME is for a DNS name"
        )),
        Err(_) => Err(format!("{s:?} is not a DNS name")),
    }
}

/// An ACME account's contact: a `mailto:` URL.
pub fn parse_contact(s: &str) -> Result<String, String> {
    match s.strip_prefix("mailto:") {
        Some(address) if address.contains('@') => Ok(s.to_string()),
        _ => Err(format!(
            "{s:?} is not a contact: write mailto:you@example.org"
        )),
    }
}

/// A CIDR range, or one address (as its /32 or /128).
pub fn parse_range(s: &str) -> Result<IpNet, String> {
    if let Ok(net) = s.parse::<IpNet>() {
        return Ok(net.trunc());
    }
    s.parse::<std::net::IpAddr>().map(IpNet::from).map_err(|_| {
        format!("{s:?} is not an address or a CIDR range (like 10.0.0.0/8 or ::1/128)")
    })
}

/// The `[limits]` table over the default limits: every field of [`Limits`]
/// is a key, and nothing else is.
fn limits_over_defaults<'de, D: Deserializer<'de>>(d: D) -> Result<Limits, D::Error> {
    let given = toml::Table::deserialize(d)?;
    let mut table = toml::Table::try_from(Config::default().limits).map_err(D::Error::custom)?;
    for (key, value) in given {
        if !table.contains_key(&key) {
            let known: Vec<&str> = table.keys().map(String::as_str).collect();
            return Err(D::Error::custom(format!(
                "unknown key `limits.{key}`; the limits are {}",
                known.join(", ")
            )));
        }
        table.insert(key, value);
    }
    serde_path_to_error::deserialize(table).map_err(|e| {
        let key = e.path().to_string();
        D::Error::custom(format!("`limits.{key}`: {}", e.into_inner()))
    })
}

#[cfg(test)]
mod tests;
