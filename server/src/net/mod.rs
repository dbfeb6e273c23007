//! The outer layer: what a TCP connection meets before it is a protocol
//! connection. The connection caps ([`caps`]), HTTP on the same port
//! ([`http`]: the web page, the JSON API, `/healthz`, `/metrics`, and the
//! upgrade that hands a WebSocket to `crate::connection`).

pub mod caps;
pub mod http;
