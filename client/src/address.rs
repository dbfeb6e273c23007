//! Server addresses as people write them: `ws://` and `wss://` URLs,
//! `http(s)://` for the WebSocket on the same host, a bare `host:port`, or a
//! cluster's nodes separated by commas.

/// Reads a server address, or a cluster's nodes' addresses separated by
/// commas (a connection takes the first that answers, a reconnection
/// starts with the next): `ws://` or `wss://` URLs as given, `http(s)://` as
/// the WebSocket on the same host, and a bare `host:port` as `ws://`.
pub fn parse_server(text: &str) -> Result<String, String> {
    if !text.contains(',') {
        return parse_one_server(text);
    }
    let mut nodes = Vec::new();
    for part in text.split(',') {
        if part.trim().is_empty() {
            return Err(format!(
                "{text:?}: an empty address in the list (separate addresses with one comma)"
            ));
        }
        nodes.push(parse_one_server(part)?);
    }
    Ok(nodes.join(","))
}

/// `url`'s addresses from the `n`-th on, counting round (`url`: addresses
/// separated by commas, or one): the list a reconnection tries, so that each
/// attempt starts with another node.
pub fn nth_first(url: &str, n: usize) -> String {
    let addresses: Vec<&str> = url.split(',').map(str::trim).collect();
    let start = n % addresses.len();
    let (before, after) = addresses.split_at(start);
    after
        .iter()
        .chain(before)
        .copied()
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_one_server(text: &str) -> Result<String, String> {
    let text = text.trim().trim_end_matches('/');
    if text.is_empty() {
        return Err("say which server, e.g. ws://127.0.0.1:7878".into());
    }
    let url = if let Some(rest) = text.strip_prefix("http://") {
        format!("ws://{rest}")
    } else if let Some(rest) = text.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if text.starts_with("ws://") || text.starts_with("wss://") {
        text.to_string()
    } else if text.contains("://") {
        return Err(format!(
            "{text:?}: a server is a ws:// or wss:// address, e.g. ws://127.0.0.1:7878"
        ));
    } else {
        format!("ws://{text}")
    };
    let host = url.split("://").nth(1).unwrap_or("");
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{text:?} is not a server address, e.g. ws://127.0.0.1:7878"
        ));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::{nth_first, parse_server};

    #[test]
    fn addresses_are_taken_in_turn() {
        assert_eq!(nth_first("ws://a", 3), "ws://a");
        let nodes = "ws://a:1, ws://b:2,ws://c:3";
        let turn: Vec<String> = (0..4).map(|n| nth_first(nodes, n)).collect();
        assert_eq!(
            turn,
            [
                "ws://a:1,ws://b:2,ws://c:3",
                "ws://b:2,ws://c:3,ws://a:1",
                "ws://c:3,ws://a:1,ws://b:2",
                "ws://a:1,ws://b:2,ws://c:3"
            ]
        );
    }

    #[test]
    fn server_addresses() {
        assert_eq!(
            parse_server("127.0.0.1:18080").as_deref(),
            Ok("ws://127.0.0.1:18080")
        );
        assert_eq!(parse_server("ws://h:1/").as_deref(), Ok("ws://h:1"));
        assert_eq!(parse_server("https://h.org").as_deref(), Ok("wss://h.org"));
        assert_eq!(parse_server("http://h:7878").as_deref(), Ok("ws://h:7878"));
        assert!(parse_server("ftp://h").unwrap_err().contains("ws://"));
        assert!(parse_server("").is_err());
        assert!(parse_server("a b").is_err());
        assert_eq!(
            parse_server("h:1, ws://g:2/").as_deref(),
            Ok("ws://h:1,ws://g:2"),
            "a cluster's nodes"
        );
        assert!(parse_server("h:1,,g:2").unwrap_err().contains("empty"));
        assert!(parse_server("h:1,ftp://g").unwrap_err().contains("ws://"));
    }
}
