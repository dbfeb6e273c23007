//! The terminal during a match: the lines a person types, and everything
//! printed meanwhile.
//!
//! At a terminal, a line editor (`reedline`) reads the lines: arrow keys,
//! history (kept between runs), Ctrl-C. What the match prints while a line
//! is being typed goes through the editor's printer, above the line being
//! typed, and the prompt is drawn again from the match's state (so its
//! clocks tick). Piped input, `TERM=dumb` or `GRUNDY_PLAIN=1` get plain
//! lines instead (scripts and screen readers): standard input read line by
//! line, output printed as it comes, the prompt printed after it.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use reedline::{
    ExternalPrinter, FileBackedHistory, Prompt, PromptEditMode, PromptHistorySearch, Reedline,
    Signal,
};
use tokio::sync::mpsc;

/// What the person did at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    Line(String),
    /// Ctrl-C at the line editor.
    Interrupt,
    /// End of input (Ctrl-D, or the pipe closed).
    End,
}

/// Lines longer than this are cut (a paste of a whole spec is still read,
/// and answered, rather than held in full).
const MAX_LINE: usize = 4096;

/// How many lines of history are kept.
const HISTORY: usize = 500;

pub struct Console {
    lines: mpsc::UnboundedReceiver<Typed>,
    /// What was read and given back (`unread`), read again first.
    unread: Option<Typed>,
    prompt: Arc<Mutex<String>>,
    editor: Option<Editor>,
}

/// The line editor's side: its thread and the handles that reach into it.
struct Editor {
    printer: std::sync::mpsc::SyncSender<String>,
    repaint: Box<dyn Fn() + Send + Sync>,
    stop: Arc<AtomicBool>,
    /// Counts the editor's input-loop turns (each turn prints what waits).
    turns: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

/// Whether the line editor is used: both ends a terminal, and not asked off.
fn wants_editor() -> bool {
    std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
        && std::env::var_os("GRUNDY_PLAIN").is_none()
}

impl Console {
    /// The line editor at a terminal, plain lines otherwise.
    pub fn start() -> Console {
        let prompt = Arc::new(Mutex::new(String::new()));
        if wants_editor() {
            if let Some(console) = Console::editor(prompt.clone()) {
                return console;
            }
        }
        Console::plain(prompt)
    }

    /// Plain lines whatever the terminal (for commands that print at any time).
    pub fn plain_lines() -> Console {
        Console::plain(Arc::new(Mutex::new(String::new())))
    }

    fn plain(prompt: Arc<Mutex<String>>) -> Console {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            loop {
                line.clear();
                let typed = match std::io::stdin().read_line(&mut line) {
                    Ok(0) | Err(_) => Typed::End,
                    Ok(_) => Typed::Line(clean(&line)),
                };
                let end = typed == Typed::End;
                if tx.send(typed).is_err() || end {
                    break;
                }
            }
        });
        Console {
            lines: rx,
            unread: None,
            prompt,
            editor: None,
        }
    }

    fn editor(prompt: Arc<Mutex<String>>) -> Option<Console> {
        let printer = ExternalPrinter::<String>::new(256);
        let sender = printer.sender();
        let stop = Arc::new(AtomicBool::new(false));
        let turns = Arc::new(AtomicU64::new(0));
        let counted = turns.clone();
        let mut reedline = Reedline::create()
            .with_external_printer(printer)
            .with_break_signal(stop.clone())
            .with_poll_interval(Duration::from_millis(50))
            .with_idle_callback(Box::new(move || {
                counted.fetch_add(1, Ordering::SeqCst);
            }));
        if let Some(path) = history_file() {
            if let Ok(history) = FileBackedHistory::with_file(HISTORY, path) {
                reedline = reedline.with_history(Box::new(history));
            }
        }
        let signal = reedline.repaint_signal();
        let repaint = Box::new(move || signal.request_repaint());
        let (tx, rx) = mpsc::unbounded_channel();
        let shown = GamePrompt(prompt.clone());
        let thread = std::thread::spawn(move || loop {
            let typed = match reedline.read_line(&shown) {
                Ok(Signal::Success(line)) => Typed::Line(clean(&line)),
                Ok(Signal::CtrlC) => Typed::Interrupt,
                // Ctrl-D: the editor reads on until stopped, so what the
                // command says on its way out is still printed.
                Ok(Signal::CtrlD) => Typed::End,
                Ok(Signal::ExternalBreak(_)) => break,
                Ok(_) | Err(_) => {
                    let _ = tx.send(Typed::End);
                    break;
                }
            };
            if tx.send(typed).is_err() {
                break;
            }
        });
        Some(Console {
            lines: rx,
            unread: None,
            prompt,
            editor: Some(Editor {
                printer: sender,
                repaint,
                stop,
                turns,
                thread: Some(thread),
            }),
        })
    }

    /// The next thing the person typed.
    pub async fn next(&mut self) -> Typed {
        if let Some(typed) = self.unread.take() {
            return typed;
        }
        self.lines.recv().await.unwrap_or(Typed::End)
    }

    /// Gives back what `next` returned, for the next `next` (a line read
    /// ahead by a match that ended meanwhile belongs to what follows).
    pub fn unread(&mut self, typed: Typed) {
        self.unread = Some(typed);
    }

    /// Prints `text` (a line or several; a final newline is added).
    pub fn say(&self, text: &str) {
        let text = text.trim_end_matches('\n');
        match &self.editor {
            Some(e) => {
                let _ = e.printer.send(text.to_string());
            }
            None => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}");
                let _ = out.flush();
            }
        }
    }

    /// Sets the prompt (`""`: none) and shows it: drawn again by the line
    /// editor, printed after the output in plain lines.
    pub fn prompt(&self, text: &str) {
        *self.prompt.lock().unwrap_or_else(|p| p.into_inner()) = text.to_string();
        match &self.editor {
            Some(e) => (e.repaint)(),
            None if !text.is_empty() => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{text}> ");
                let _ = out.flush();
            }
            None => {}
        }
    }

    /// Updates the prompt's text where it is drawn again on its own (the line
    /// editor: a ticking clock); plain lines print nothing.
    pub fn refresh(&self, text: &str) {
        if self.editor.is_some() {
            self.prompt(text);
        }
    }

    /// Whether the lines come from a script (standard input is not a
    /// terminal), which types ahead of the match.
    pub fn scripted(&self) -> bool {
        !std::io::stdin().is_terminal()
    }

    /// Whether the line editor draws the prompt (and so can keep it live).
    pub fn is_live(&self) -> bool {
        self.editor.is_some()
    }

    /// Stops reading: what was said is printed, the terminal is given back
    /// as it was. Plain output afterwards goes straight to stdout.
    pub async fn stop(&mut self) {
        let Some(mut e) = self.editor.take() else {
            return;
        };
        // Two more turns of the editor's loop: the second began after
        // everything said so far was queued, and every turn prints what waits.
        let from = e.turns.load(Ordering::SeqCst);
        for _ in 0..100 {
            if e.turns.load(Ordering::SeqCst) >= from + 2 {
                break;
            }
            if e.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        e.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = e.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        // The editor leaves its last prompt on the screen: clear that line.
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[2K");
        let _ = out.flush();
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Some(e) = &mut self.editor {
            e.stop.store(true, Ordering::SeqCst);
            if let Some(thread) = e.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// The prompt the line editor draws: the match's line, then `> `.
struct GamePrompt(Arc<Mutex<String>>);

impl Prompt for GamePrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }
    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }
    fn render_prompt_indicator(&self, _: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("> ")
    }
    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("… ")
    }
    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", search.term))
    }
}

/// Where the typed lines are kept between runs (owner-only folder).
fn history_file() -> Option<std::path::PathBuf> {
    let dir = crate::seats::config_dir()?;
    crate::seats::make_private_dir(&dir).ok()?;
    let path = dir.join("history.txt");
    // Made here, owner-only, before the editor writes to it.
    crate::seats::touch_private(&path).ok()?;
    Some(path)
}

/// A typed line made safe to read and to echo: terminal escape sequences
/// (arrow keys at a terminal without the line editor) and other control
/// characters are dropped, and a very long paste is cut.
pub fn clean(line: &str) -> String {
    let mut out = String::with_capacity(line.len().min(MAX_LINE));
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI (`ESC [ … final`) or SS3 (`ESC O x`) or a lone ESC + key.
            match chars.next() {
                Some('[') => {
                    while let Some(&n) = chars.peek() {
                        chars.next();
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                Some('O') => {
                    chars.next();
                }
                _ => {}
            }
            continue;
        }
        if c == '\t' {
            out.push(' ');
        } else if !c.is_control() {
            out.push(c);
        }
        if out.len() >= MAX_LINE {
            break;
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn escape_sequences_and_controls_are_dropped() {
        // Up, down, right, left, as a terminal without an editor sends them.
        assert_eq!(clean("0 2\x1b[A\x1b[B\x1b[C\x1b[D"), "0 2");
        assert_eq!(clean("\x1bOA0 2"), "0 2");
        assert_eq!(clean("\x1b[1;5D1\t3\r\n"), "1 3");
        assert_eq!(clean("a\u{7}b"), "ab");
        assert_eq!(clean("  hint  "), "hint");
        // Odd Unicode that is not a control stays, to be answered as text.
        assert_eq!(clean("héap ①"), "héap ①");
        assert!(clean(&"9".repeat(100_000)).len() <= super::MAX_LINE);
    }
}
