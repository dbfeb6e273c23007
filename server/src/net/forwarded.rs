//! Who the client is behind a trusted proxy: the `Forwarded` (RFC 7239,
//! its `for=`) and `X-Forwarded-For` headers, read by one pure function,
//! [`client_address`].
//!
//! What is believed:
//! - Nothing, unless the connection's peer is inside one of the trusted
//!   ranges (`--trusted-proxy`): then the peer's own address is the client.
//! - From a trusted peer, the hops the header lists, walked from the right
//!   (the hop the peer itself added) leftwards, skipping every address that
//!   is itself a trusted proxy: the first one that is not is the client.
//!   Everything left of it was written by the client or by proxies we do not
//!   know, and is ignored. When every hop is trusted, the left-most is the
//!   client.
//! - An obfuscated or unknown hop (`for=unknown`, `for=_hidden`, an element
//!   of `Forwarded` without `for=`) where the client would be: the client is
//!   the trusted hop that reported it (the address to its right, or the peer).
//!   The proxy says it does not know; everyone it does not know shares its
//!   address's limits. Never refused: that proxy's clients can still play.
//! - Only one of the two headers: a request from a trusted peer with both is
//!   refused, since nothing says which one the proxy wrote (the other is
//!   whatever the client sent). Configure the proxy to set one and clear the
//!   other (docs/deploy.md).
//! - A header that cannot be read where it is believed (an entry that is not
//!   an address at or right of the client, a `Forwarded` element that is not
//!   `key=value` pairs, an unclosed quote, a repeated `for`, bytes that are
//!   not visible ASCII) is refused with what is wrong ([`BadForwarded`]): a
//!   trusted proxy sent it, so it is a misconfiguration worth hearing about,
//!   not something to guess around. Entries left of the client are never
//!   believed and so never looked into: a client that sends
//!   `X-Forwarded-For: nonsense` through a proxy that appends to it is still
//!   its own address. (A `Forwarded` header's syntax is read whole: an
//!   unclosed quote may swallow what the proxy appended.)

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The header a proxy appends the client to, as RFC 7239 names it.
pub const FORWARDED: &str = "forwarded";
/// The older, informal header.
pub const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The longest piece of a bad header quoted back in a refusal.
const QUOTED: usize = 64;

/// Why a trusted proxy's forwarding header was not believed: said so that
/// whoever configured the proxy can fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadForwarded(pub String);

impl fmt::Display for BadForwarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadForwarded {}

/// One hop of the chain: an address, or one the proxy would not or could
/// not give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Known(IpAddr),
    Hidden,
}

/// Whether `ip` is inside one of `ranges`.
pub fn is_inside(ranges: &[IpNet], ip: IpAddr) -> bool {
    let ip = ip.to_canonical();
    ranges.iter().any(|net| net.contains(&ip))
}

/// The client of a request that came from `peer` with `headers`, given the
/// `trusted` proxy ranges. The peer's own address unless it is trusted (then
/// the headers are read as the module says); an error names what is wrong
/// with a trusted proxy's header.
pub fn client_address(
    peer: IpAddr,
    headers: &HeaderMap,
    trusted: &[IpNet],
) -> Result<IpAddr, BadForwarded> {
    let peer = peer.to_canonical();
    if !is_inside(trusted, peer) {
        return Ok(peer);
    }
    let forwarded = joined(headers, FORWARDED)?;
    let x_forwarded_for = joined(headers, X_FORWARDED_FOR)?;
    let hops = match (forwarded, x_forwarded_for) {
        (None, None) => return Ok(peer),
        (Some(_), Some(_)) => {
            return Err(BadForwarded(
                "both Forwarded and X-Forwarded-For are present: cannot tell which one the \
                 proxy wrote; have it set one and clear the other"
                    .into(),
            ))
        }
        (Some(value), None) => parse_forwarded(&value)?,
        (None, Some(value)) => parse_x_forwarded_for(&value),
    };
    pick(peer, hops, trusted)
}

/// The client among `hops` (left-most first; each read, or what is wrong
/// with it) that reached trusted `peer`. Only the hops from the right up to
/// the client are looked at.
fn pick(
    peer: IpAddr,
    hops: Vec<Result<Hop, BadForwarded>>,
    trusted: &[IpNet],
) -> Result<IpAddr, BadForwarded> {
    // The address that handed on the hop being looked at.
    let mut reporter = peer;
    for hop in hops.into_iter().rev() {
        match hop? {
            Hop::Hidden => return Ok(reporter),
            Hop::Known(ip) if is_inside(trusted, ip) => reporter = ip,
            Hop::Known(ip) => return Ok(ip),
        }
    }
    Ok(reporter)
}

/// Every value of header `name`, joined by commas in the order received (a
/// list header split over several lines is one list, RFC 9110 5.3); None if
/// there is none.
fn joined(headers: &HeaderMap, name: &str) -> Result<Option<String>, BadForwarded> {
    let mut out: Option<String> = None;
    for value in headers.get_all(name) {
        let text = value
            .to_str()
            .map_err(|_| BadForwarded(format!("{}: not visible ASCII", display_name(name))))?;
        match &mut out {
            None => out = Some(text.to_string()),
            Some(all) => {
                all.push(',');
                all.push_str(text);
            }
        }
    }
    Ok(out)
}

fn display_name(name: &str) -> &'static str {
    if name == FORWARDED {
        "Forwarded"
    } else {
        "X-Forwarded-For"
    }
}

/// `s` quoted for a refusal, cut short if long.
fn quote(s: &str) -> String {
    let mut cut: String = s.chars().take(QUOTED).collect();
    if cut.len() < s.len() {
        cut.push('…');
    }
    format!("{cut:?}")
}

/// `X-Forwarded-For: 203.0.113.7, 2001:db8::1, 198.51.100.2`: addresses
/// separated by commas; `[v6]`, `[v6]:port` and `v4:port` are read too, and
/// `unknown` or `_name` as a hidden hop.
fn parse_x_forwarded_for(value: &str) -> Vec<Result<Hop, BadForwarded>> {
    value
        .split(',')
        .enumerate()
        .map(|(i, entry)| {
            let entry = entry.trim();
            if entry.is_empty() {
                return Err(BadForwarded(format!(
                    "X-Forwarded-For: entry {} is empty",
                    i + 1
                )));
            }
            node(entry).ok_or_else(|| {
                BadForwarded(format!(
                    "X-Forwarded-For: entry {} ({}) is not an IP address",
                    i + 1,
                    quote(entry)
                ))
            })
        })
        .collect()
}

/// A node as `for=` (RFC 7239 section 6) or X-Forwarded-For gives it: an
/// address with or without a port, or a hidden one.
fn node(s: &str) -> Option<Hop> {
    if s.eq_ignore_ascii_case("unknown") || is_obfuscated(s) {
        return Some(Hop::Hidden);
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(Hop::Known(ip.to_canonical()));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Some(Hop::Known(addr.ip().to_canonical()));
    }
    // `[v6]` alone, or `[v6]:_port` / `v4:_port` (an obfuscated port).
    if let Some(inner) = s.strip_prefix('[') {
        let (ip, rest) = inner.split_once(']')?;
        let ip: Ipv6Addr = ip.parse().ok()?;
        return (rest.is_empty() || rest.strip_prefix(':').is_some_and(is_obfuscated))
            .then_some(Hop::Known(IpAddr::V6(ip).to_canonical()));
    }
    let (ip, port) = s.split_once(':')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    is_obfuscated(port).then_some(Hop::Known(IpAddr::V4(ip)))
}

/// RFC 7239 section 6.3: `_` then letters, digits, `.`, `_`, `-`.
fn is_obfuscated(s: &str) -> bool {
    s.strip_prefix('_').is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    })
}

/// `Forwarded: for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8::1]:4711"`:
/// elements separated by commas, each `key=value` pairs separated by
/// semicolons, a value a token or a quoted string. One hop per element: its
/// `for` (or what is wrong with it), or a hidden hop if it has none.
fn parse_forwarded(value: &str) -> Result<Vec<Result<Hop, BadForwarded>>, BadForwarded> {
    let bad = |what: String| BadForwarded(format!("Forwarded: {what}"));
    let mut hops = Vec::new();
    let mut rest = value;
    let mut element = 1;
    loop {
        let mut hop: Option<Result<Hop, BadForwarded>> = None;
        // The pairs of one element.
        loop {
            rest = rest.trim_start_matches([' ', '\t']);
            let key_end = rest.find(['=', ';', ',']).unwrap_or(rest.len());
            let key = rest[..key_end].trim_end_matches([' ', '\t']);
            if key.is_empty() {
                return Err(bad(format!(
                    "element {element}: a parameter without a name"
                )));
            }
            if !key.bytes().all(is_tchar) {
                return Err(bad(format!(
                    "element {element}: {} is not a parameter name",
                    quote(key)
                )));
            }
            if !rest[key_end..].starts_with('=') {
                return Err(bad(format!(
                    "element {element}: parameter {} has no `=value`",
                    quote(key)
                )));
            }
            rest = &rest[key_end + 1..];
            let (value, after) = if let Some(quoted) = rest.strip_prefix('"') {
                let (value, len) = unquote(quoted).ok_or_else(|| {
                    bad(format!(
                        "element {element}: the quoted value of {} is not closed",
                        quote(key)
                    ))
                })?;
                (value, &quoted[len..])
            } else {
                let end = rest.find([';', ',']).unwrap_or(rest.len());
                let token = rest[..end].trim_end_matches([' ', '\t']);
                if token.is_empty() || !token.bytes().all(is_tchar) {
                    return Err(bad(format!(
                        "element {element}: the value of {} ({}) is not a token; \
                         an IPv6 address or a port must be quoted",
                        quote(key),
                        quote(token)
                    )));
                }
                (token.to_string(), &rest[end..])
            };
            if key.eq_ignore_ascii_case("for") {
                if hop.is_some() {
                    return Err(bad(format!("element {element}: `for` given twice")));
                }
                hop = Some(node(&value).ok_or_else(|| {
                    bad(format!(
                        "element {element}: for={} is not an IP address, \
                         `unknown` or an obfuscated `_name`",
                        quote(&value)
                    ))
                }));
            }
            rest = after.trim_start_matches([' ', '\t']);
            match rest.as_bytes().first() {
                Some(b';') => rest = &rest[1..],
                Some(b',') | None => break,
                Some(_) => {
                    return Err(bad(format!(
                        "element {element}: {} follows a value (a `;` or `,` was expected)",
                        quote(rest)
                    )))
                }
            }
        }
        hops.push(hop.unwrap_or(Ok(Hop::Hidden)));
        match rest.strip_prefix(',') {
            Some(next) => {
                rest = next;
                element += 1;
            }
            None => return Ok(hops),
        }
    }
}

/// A quoted string's text after its opening quote: the value with its
/// escapes undone, and the length read including the closing quote; None if
/// it never closes.
fn unquote(s: &str) -> Option<(String, usize)> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, i + 1)),
            '\\' => value.push(chars.next()?.1),
            c => value.push(c),
        }
    }
    None
}

/// RFC 9110's `tchar`: what a token is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address")
    }

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().expect("range")).collect()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).expect("value"));
        }
        map
    }

    /// The client seen from proxy 10.0.0.1, which is trusted with 10.0.0.0/8.
    fn via_proxy(pairs: &[(&'static str, &str)]) -> Result<IpAddr, BadForwarded> {
        client_address(ip("10.0.0.1"), &headers(pairs), &nets(&["10.0.0.0/8"]))
    }

    #[test]
    fn nothing_is_believed_from_an_untrusted_peer() {
        let forged = headers(&[(X_FORWARDED_FOR, "198.51.100.7")]);
        assert_eq!(
            client_address(ip("203.0.113.9"), &forged, &nets(&["10.0.0.0/8"])),
            Ok(ip("203.0.113.9"))
        );
        // No ranges at all: not even loopback is believed.
        assert_eq!(
            client_address(ip("127.0.0.1"), &forged, &[]),
            Ok(ip("127.0.0.1"))
        );
        // Not even a malformed header is looked at.
        let garbage = headers(&[(X_FORWARDED_FOR, "not an address")]);
        assert_eq!(
            client_address(ip("127.0.0.1"), &garbage, &[]),
            Ok(ip("127.0.0.1"))
        );
    }

    #[test]
    fn a_trusted_proxy_without_a_header_is_the_client() {
        assert_eq!(via_proxy(&[]), Ok(ip("10.0.0.1")));
    }

    #[test]
    fn x_forwarded_for_gives_the_right_most_untrusted_address() {
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
        // The client's own forgery is left of what the proxy appended.
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "192.0.2.1, 198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
        // Several trusted hops are skipped.
        assert_eq!(
            via_proxy(&[(
                X_FORWARDED_FOR,
                "192.0.2.1,198.51.100.7 , 10.1.1.1,10.2.2.2"
            )]),
            Ok(ip("198.51.100.7"))
        );
        // Split over two header lines: one list, in order.
        assert_eq!(
            via_proxy(&[
                (X_FORWARDED_FOR, "192.0.2.1"),
                (X_FORWARDED_FOR, "198.51.100.7")
            ]),
            Ok(ip("198.51.100.7"))
        );
        // Every hop trusted: the left-most.
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "10.9.9.9, 10.1.1.1")]),
            Ok(ip("10.9.9.9"))
        );
        // IPv6, bracketed, with ports; a mapped IPv4 address as IPv4.
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "2001:db8::1")]),
            Ok(ip("2001:db8::1"))
        );
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "[2001:db8::1]:4711")]),
            Ok(ip("2001:db8::1"))
        );
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "198.51.100.7:5000")]),
            Ok(ip("198.51.100.7"))
        );
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "::ffff:198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
    }

    #[test]
    fn forwarded_gives_the_right_most_untrusted_for() {
        assert_eq!(
            via_proxy(&[(FORWARDED, "for=198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
        assert_eq!(
            via_proxy(&[(FORWARDED, "For=\"[2001:db8:cafe::17]:4711\"")]),
            Ok(ip("2001:db8:cafe::17"))
        );
        assert_eq!(via_proxy(&[(FORWARDED, "for=\"[::1]:80\"")]), Ok(ip("::1")));
        assert_eq!(
            via_proxy(&[(FORWARDED, "for=\"198.51.100.7:_p1\"")]),
            Ok(ip("198.51.100.7"))
        );
        // RFC 7239's own examples, several parameters and hops.
        assert_eq!(
            via_proxy(&[(
                FORWARDED,
                "for=192.0.2.43, for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com"
            )]),
            Ok(ip("198.51.100.17"))
        );
        assert_eq!(
            via_proxy(&[(
                FORWARDED,
                "for=192.0.2.43,for=\"[2001:db8:cafe::17]\" , for=10.3.3.3"
            )]),
            Ok(ip("2001:db8:cafe::17"))
        );
        // A quoted value may hold the separators and escapes.
        assert_eq!(
            via_proxy(&[(FORWARDED, "host=\"a,b;c\\\"d\";for=198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
    }

    #[test]
    fn a_hidden_client_is_counted_as_the_proxy_that_hid_it() {
        assert_eq!(via_proxy(&[(FORWARDED, "for=_hidden")]), Ok(ip("10.0.0.1")));
        assert_eq!(via_proxy(&[(FORWARDED, "for=unknown")]), Ok(ip("10.0.0.1")));
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "unknown")]),
            Ok(ip("10.0.0.1"))
        );
        // An element without `for`: that hop is unknown.
        assert_eq!(via_proxy(&[(FORWARDED, "proto=https")]), Ok(ip("10.0.0.1")));
        // Hidden behind a second trusted proxy: that proxy's address.
        assert_eq!(
            via_proxy(&[(FORWARDED, "for=198.51.100.7, for=_x, for=10.5.5.5")]),
            Ok(ip("10.5.5.5"))
        );
        // A hidden hop left of the client does not matter.
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "unknown, 198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
    }

    fn refusal(pairs: &[(&'static str, &str)]) -> String {
        via_proxy(pairs).expect_err("refused").0
    }

    #[test]
    fn a_malformed_header_is_refused_with_what_is_wrong() {
        let e = refusal(&[(X_FORWARDED_FOR, "198.51.100.7, not-an-ip")]);
        assert!(
            e.contains("X-Forwarded-For") && e.contains("entry 2") && e.contains("not-an-ip"),
            "{e}"
        );
        let e = refusal(&[(X_FORWARDED_FOR, "10.0.0.2,,10.0.0.2")]);
        assert!(e.contains("entry 2 is empty"), "{e}");
        assert!(refusal(&[(X_FORWARDED_FOR, "")]).contains("entry 1 is empty"));
        assert!(refusal(&[(X_FORWARDED_FOR, "[2001:db8::1")]).contains("not an IP address"));
        assert!(refusal(&[(X_FORWARDED_FOR, "198.51.100.7:http")]).contains("not an IP address"));
        let e = refusal(&[(FORWARDED, "for=[2001:db8::1]")]);
        assert!(e.contains("must be quoted"), "{e}");
        let e = refusal(&[(FORWARDED, "for=\"198.51.100.7")]);
        assert!(e.contains("not closed"), "{e}");
        let e = refusal(&[(FORWARDED, "for=198.51.100.7;for=192.0.2.1")]);
        assert!(e.contains("`for` given twice"), "{e}");
        let e = refusal(&[(FORWARDED, "198.51.100.7")]);
        assert!(e.contains("has no `=value`"), "{e}");
        let e = refusal(&[(FORWARDED, "for=hostname.example")]);
        assert!(e.contains("is not an IP address"), "{e}");
        // Between the client and the peer, a bad entry is refused too.
        let e = refusal(&[(X_FORWARDED_FOR, "198.51.100.7, 10.0.0.2:x, 10.0.0.3")]);
        assert!(e.contains("entry 2"), "{e}");
        let e = refusal(&[(FORWARDED, "for=198.51.100.7,")]);
        assert!(
            e.contains("element 2") && e.contains("without a name"),
            "{e}"
        );
        let e = refusal(&[(FORWARDED, "for=\"198.51.100.7\" x")]);
        assert!(e.contains("was expected"), "{e}");
        let e = refusal(&[
            (FORWARDED, "for=198.51.100.7"),
            (X_FORWARDED_FOR, "192.0.2.1"),
        ]);
        assert!(e.contains("both"), "{e}");
        // Bytes a header may carry but that are not text.
        let mut map = HeaderMap::new();
        map.insert(
            X_FORWARDED_FOR,
            HeaderValue::from_bytes(b"198.51.100.\xff").expect("value"),
        );
        let e = client_address(ip("10.0.0.1"), &map, &nets(&["10.0.0.0/8"])).expect_err("bytes");
        assert!(e.0.contains("not visible ASCII"), "{e}");
        // A long entry is quoted cut short.
        let long = "x".repeat(10_000);
        assert!(refusal(&[(X_FORWARDED_FOR, &long)]).len() < 200);
    }

    #[test]
    fn what_is_left_of_the_client_is_not_looked_into() {
        // What a client sent before the proxy appended its address.
        assert_eq!(
            via_proxy(&[(X_FORWARDED_FOR, "nonsense, ,198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
        assert_eq!(
            via_proxy(&[(FORWARDED, "for=nonsense, for=198.51.100.7")]),
            Ok(ip("198.51.100.7"))
        );
    }

    #[test]
    fn no_header_makes_it_panic() {
        // Every short string of the characters that matter, both headers.
        let alphabet = [
            "for", "=", "\"", ";", ",", " ", "[", "]", ":", "1", "::1", "_", "\\", "by",
        ];
        let mut cases = vec![String::new()];
        for _ in 0..4 {
            cases = cases
                .iter()
                .flat_map(|c| alphabet.iter().map(move |a| format!("{c}{a}")))
                .collect();
            for case in &cases {
                let Ok(value) = HeaderValue::from_str(case) else {
                    continue;
                };
                for name in [FORWARDED, X_FORWARDED_FOR] {
                    let mut map = HeaderMap::new();
                    map.insert(name, value.clone());
                    let _ = client_address(ip("10.0.0.1"), &map, &nets(&["10.0.0.0/8"]));
                }
            }
        }
    }
}
