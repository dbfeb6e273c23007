//! End-to-end tests over real sockets live here once the server exists.
