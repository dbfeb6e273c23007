//! The tokens `grundy account login` keeps, one per server, in the config
//! folder (`tokens.json`, readable by its owner only).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result};

pub fn tokens_file() -> Result<PathBuf> {
    let dir =
        crate::seats::config_dir().context("no config directory (set HOME or XDG_CONFIG_HOME)")?;
    Ok(dir.join("tokens.json"))
}

fn read_tokens() -> Result<BTreeMap<String, String>> {
    let path = tokens_file()?;
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a JSON object of tokens", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

pub fn kept(url: &str) -> Result<Option<String>> {
    Ok(read_tokens()?.remove(url))
}

/// Keeps (or with None forgets) the token for `url`, in a file only its
/// owner can read.
pub fn keep(url: &str, token: Option<&str>) -> Result<()> {
    let path = tokens_file()?;
    let mut tokens = read_tokens()?;
    match token {
        Some(t) => tokens.insert(url.to_string(), t.to_string()),
        None => tokens.remove(url),
    };
    crate::seats::write_private(&path, serde_json::to_string_pretty(&tokens)?.as_bytes())
}
