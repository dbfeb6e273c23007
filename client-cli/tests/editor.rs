//! The line editor at a real terminal: `grundy play` in a tmux window (which
//! answers the terminal queries the editor makes, as a person's terminal
//! does). Arrow keys edit the line, Up recalls history, the prompt's clock
//! ticks while nobody types, and Ctrl-C leaves with the seat kept.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{TestServer, PATIENCE_MS};

/// A tmux server of this test's own (its own socket), one window.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(command: &str) -> Tmux {
        let socket = format!("grundy-test-{}", std::process::id());
        let status = Command::new("tmux")
            .args(["-L", &socket, "new-session", "-d", "-x", "120", "-y", "40"])
            .arg(command)
            .status()
            .expect("tmux runs (the CI installs it)");
        assert!(status.success(), "tmux new-session: {status}");
        Tmux { socket }
    }

    fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once `check` holds of it (fails after the patience).
    fn wait(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_millis(PATIENCE_MS);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_for(&self, text: &str) -> String {
        self.wait(text, |s| s.contains(text))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// The prompt's own clock, e.g. "4:58" in "your move (you 4:58 · …)> ".
fn prompt_clock(screen: &str) -> Option<String> {
    let line = screen
        .lines()
        .rev()
        .find(|l| l.starts_with("your move (you "))?;
    Some(
        line["your move (you ".len()..]
            .split_whitespace()
            .next()?
            .to_string(),
    )
}

#[test]
fn the_line_editor_edits_recalls_ticks_and_keeps_the_seat_on_ctrl_c() {
    let server = TestServer::start();
    let home = tempfile::tempdir().expect("dir");
    let command = format!(
        "env XDG_CONFIG_HOME={home} HOME={home} TERM=xterm-256color NO_COLOR=1 {bin} play \
         --server {url} --game 'nim 3 4 5' --bot perfect --clock 5+0 --name zed; sleep 60",
        home = home.path().display(),
        bin = env!("CARGO_BIN_EXE_grundy"),
        url = server.url(),
    );
    let t = Tmux::start(&command);
    let first = t.wait("the prompt with a clock", |s| prompt_clock(s).is_some());
    let shown = prompt_clock(&first).expect("a clock");
    // Nobody types: the clock in the prompt goes on by itself.
    t.wait("the prompt's clock to tick", |s| {
        prompt_clock(s).is_some_and(|c| c != shown)
    });

    t.keys(&["hint", "Enter"]);
    t.wait_for("No hints in this match");
    // Up recalls the line typed before.
    t.keys(&["Up"]);
    t.wait("history to recall `hint`", |s| {
        s.lines()
            .any(|l| l.starts_with("your move (you ") && l.ends_with("> hint"))
    });
    t.keys(&["C-u"]);
    // Arrow keys move in the line; nothing of them ends up in it.
    t.keys(&["0 2", "Left", "Left", "Right", "Right", "Enter"]);
    let screen = t.wait_for("You played: take 2 from heap 0 (of 3).");
    assert!(!screen.contains("[D") && !screen.contains("[C"), "{screen}");
    t.wait_for("house-bot (perfect) played:");

    t.keys(&["C-c"]);
    let screen = t.wait_for("your seat is kept");
    assert!(screen.contains("grundy play --resume "), "{screen}");
}
