//! `grundy account`: the real binary against a real server started here on
//! port 0, with a config directory of its own. An account is opened, logged
//! in (the token kept, readable by its owner only), used by `grundy lobby`'s
//! neighbours through the kept token, listed, and logged out.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::TestServer;

/// `grundy ARGS` with `input` on standard input and `config` as its config
/// directory.
fn grundy(config: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_grundy"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config)
        .env_remove("GRUNDY_TOKEN")
        .env_remove("GRUNDY_SERVER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run grundy");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    child.wait_with_output().expect("grundy ends")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn an_account_is_opened_logged_in_kept_privately_and_logged_out() {
    let server = TestServer::start();
    let url = server.url();
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path();
    let run = |args: &[&str], input: &str| {
        let mut all = args.to_vec();
        all.extend(["--server", &url]);
        grundy(config, &all, input)
    };

    let created = run(&["account", "create", "Quinn"], "a long passphrase\n");
    assert!(created.status.success(), "{}", text(&created));
    assert!(
        text(&created).contains("Account Quinn opened (a person)"),
        "{}",
        text(&created)
    );
    let again = run(&["account", "create", "quinn"], "a long passphrase\n");
    assert!(!again.status.success());
    assert!(text(&again).contains("is taken"), "{}", text(&again));

    let wrong = run(&["account", "login", "quinn"], "not it at all\n");
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("wrong username or password"),
        "{}",
        text(&wrong)
    );
    // No password given is refused here and never sent: five of these on
    // top of the wrong one would have locked the account.
    for input in ["", "\n", "", "\n", ""] {
        let none = run(&["account", "login", "quinn"], input);
        assert!(!none.status.success());
        let said = text(&none);
        assert!(
            said.contains("no password") || said.contains("the password is empty"),
            "{said}"
        );
    }
    let login = run(&["account", "login", "quinn"], "a long passphrase\n");
    assert!(login.status.success(), "{}", text(&login));
    assert!(
        text(&login).contains("Logged in as Quinn"),
        "{}",
        text(&login)
    );

    // Kept for this server, readable by its owner only, never in clear elsewhere.
    let file = config.join("grundy").join("tokens.json");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("kept")).expect("JSON");
    let token = kept[&url]
        .as_str()
        .expect("a token for the server")
        .to_string();
    assert!(token.starts_with("grundy_"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    assert!(!text(&login).contains(&token), "the secret is not printed");

    let who = run(&["account", "whoami"], "");
    assert!(
        text(&who).starts_with("Quinn (a person), token "),
        "{}",
        text(&who)
    );

    // A token for a bot: printed once on stdout, not kept.
    let made = run(
        &["account", "token", "--name", "my bot", "--scopes", "play"],
        "",
    );
    assert!(made.status.success(), "{}", text(&made));
    let bot_token = String::from_utf8_lossy(&made.stdout).trim().to_string();
    assert!(bot_token.starts_with("grundy_"), "{bot_token}");
    let listed = run(&["account", "tokens"], "");
    let listing = text(&listed);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(
        listing.contains("\"my bot\"  scopes: play  expires in 90 days"),
        "{listing}"
    );
    assert!(listing.contains("(this one)"), "{listing}");
    // The same for scripts, as JSON.
    let listed: serde_json::Value =
        serde_json::from_slice(&run(&["account", "tokens", "--json"], "").stdout).expect("JSON");
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
    let who: serde_json::Value =
        serde_json::from_slice(&run(&["account", "whoami", "--json"], "").stdout).expect("JSON");
    assert_eq!(who["account"]["username"], "Quinn", "{who}");
    let bot_id = listing
        .lines()
        .find(|l| l.contains("my bot"))
        .and_then(|l| l.split_whitespace().next())
        .expect("the bot token's id")
        .to_string();
    let revoked = run(&["account", "revoke", &bot_id], "");
    assert!(
        text(&revoked).contains(&format!("Token {bot_id} revoked.")),
        "{}",
        text(&revoked)
    );

    let out = run(&["account", "logout"], "");
    assert!(text(&out).contains("Logged out"), "{}", text(&out));
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("file")).expect("JSON");
    assert!(kept.get(&url).is_none(), "forgotten: {kept}");
    let who = run(&["account", "whoami"], "");
    assert!(!who.status.success());
    assert!(text(&who).contains("not logged in"), "{}", text(&who));
}

#[test]
fn a_new_password_is_kept_as_a_new_token_and_the_old_ones_stop_working() {
    let server = TestServer::start();
    let url = server.url();
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path();
    let run = |args: &[&str], input: &str| {
        let mut all = args.to_vec();
        all.extend(["--server", &url]);
        grundy(config, &all, input)
    };
    let file = config.join("grundy").join("tokens.json");
    let kept = || -> String {
        let kept: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).expect("kept")).expect("JSON");
        kept[&url].as_str().expect("a kept token").to_string()
    };

    let created = run(&["account", "create", "Rowan"], "a long passphrase\n");
    assert!(created.status.success(), "{}", text(&created));
    let login = run(&["account", "login", "rowan"], "a long passphrase\n");
    assert!(login.status.success(), "{}", text(&login));
    let old = kept();
    let made = run(&["account", "token", "--name", "script"], "");
    let script_token = String::from_utf8_lossy(&made.stdout).trim().to_string();
    assert!(script_token.starts_with("grundy_"), "{}", text(&made));

    // The current password first (wrong: refused, nothing changes), then
    // the new one.
    let wrong = run(
        &["account", "password"],
        "not it at all\nanother passphrase\n",
    );
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("not the account's current password"),
        "{}",
        text(&wrong)
    );
    assert_eq!(kept(), old);
    let changed = run(
        &["account", "password"],
        "a long passphrase\nanother passphrase\n",
    );
    assert!(changed.status.success(), "{}", text(&changed));
    assert!(
        text(&changed).contains("Password of Rowan changed"),
        "{}",
        text(&changed)
    );
    let new = kept();
    assert_ne!(new, old);
    assert!(!text(&changed).contains(&new), "the secret is not printed");

    // The kept token works; the old ones and the old password do not.
    let who = run(&["account", "whoami"], "");
    assert!(text(&who).starts_with("Rowan (a person)"), "{}", text(&who));
    let listed = run(&["account", "tokens"], "");
    assert_eq!(text(&listed).lines().count(), 1, "{}", text(&listed));
    let mut with_old = Command::new(env!("CARGO_BIN_EXE_grundy"));
    with_old
        .args(["account", "whoami", "--server", &url])
        .env("XDG_CONFIG_HOME", config)
        .env("HOME", config)
        .env("GRUNDY_TOKEN", &script_token);
    let refused = with_old.output().expect("grundy ends");
    assert!(!refused.status.success());
    assert!(text(&refused).contains("revoked"), "{}", text(&refused));
    let old_password = run(&["account", "login", "rowan"], "a long passphrase\n");
    assert!(!old_password.status.success());
    assert!(
        text(&old_password).contains("wrong username or password"),
        "{}",
        text(&old_password)
    );
    let again = run(&["account", "login", "rowan"], "another passphrase\n");
    assert!(again.status.success(), "{}", text(&again));
}
