//! The match server: not built yet (see the open issue on the match server).
fn main() {
    eprintln!("grundy-server is not built yet; for now use `grundy analyze`.");
    std::process::exit(2);
}
