//! The outer layer: what a TCP connection meets before it is a protocol
//! connection. The connection caps ([`caps`]), TLS when the server has a
//! certificate ([`tls`]), HTTP on the same port ([`http`]: the web page, the
//! JSON API, `/healthz`, `/metrics`, and the upgrade that hands a WebSocket
//! to `crate::connection`), and the plain port that sends browsers to the
//! TLS one ([`redirect`]).

pub mod caps;
pub mod forwarded;
pub mod http;
pub mod redirect;
pub mod tls;
