//! The perfect-play bot client: not built yet (see the open issue on the bot).
fn main() {
    eprintln!("grundy-bot is not built yet; for now use `grundy analyze`.");
    std::process::exit(2);
}
