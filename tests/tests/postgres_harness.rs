//! The PostgreSQL test harness itself: a real server, a fresh database per
//! call, and the server alive while tests run.

use std::net::{Ipv4Addr, TcpStream};

use grundy_tests::postgres;

#[test]
fn fresh_databases_on_a_live_server() {
    let Some(pg) = postgres::or_skip() else {
        return;
    };
    let first = pg.fresh_database();
    let second = pg.fresh_database();
    eprintln!(
        "postgres pid {} on port {}: {first}, {second}",
        pg.pid(),
        pg.port()
    );
    assert_ne!(first, second);
    for url in [&first, &second] {
        assert!(
            url.starts_with(&format!(
                "postgres://postgres@127.0.0.1:{}/grundy_t",
                pg.port()
            )),
            "{url}"
        );
        TcpStream::connect((Ipv4Addr::LOCALHOST, pg.port())).expect("postgres accepts connections");
    }
    assert_eq!(
        unsafe { libc::kill(pg.pid() as libc::pid_t, 0) },
        0,
        "postgres is alive"
    );
}
