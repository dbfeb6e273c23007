//! The configuration file, the environment and the flags (docs/deploy.md,
//! "Configuration"): `grundy-server config check` prints what they make
//! together, a flag over a variable over the file over the defaults; a file
//! with an unknown key or a bad value is refused, named; no password is
//! printed; a server started with `--config` serves the file's limits.

mod support;

use std::process::Output;
use std::time::Duration;

use grundy_testkit::client::Client;
use serde_json::json;
use support::Process;
use tokio::process::Command;
use tokio::time::timeout;

/// `grundy-server ARGS` with `env` (and no other `GRUNDY_` variable of
/// this test's environment), run to its end.
async fn server(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_grundy-server"));
    for (name, _) in std::env::vars() {
        if name.starts_with("GRUNDY_") {
            command.env_remove(name);
        }
    }
    command
        .args(args)
        .envs(env.iter().copied())
        .kill_on_drop(true);
    timeout(Duration::from_secs(30), command.output())
        .await
        .expect("the command ends within 30 s")
        .expect("the command runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn config_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("grundy.toml");
    std::fs::write(&path, text).expect("written");
    path.to_string_lossy().into_owned()
}

/// The printed configuration, read back as TOML.
fn printed(output: &Output) -> toml::Table {
    assert!(
        output.status.success(),
        "{:?}: {}",
        output.status,
        text(&output.stderr)
    );
    text(&output.stdout)
        .parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("not TOML: {e}\n{}", text(&output.stdout)))
}

#[tokio::test]
async fn a_flag_beats_its_variable_which_beats_the_file_which_beats_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(
        &dir,
        "listen = \"127.0.0.1:9001\"\n\
         db = \"file.db\"\n\
         lease_ms = 7000\n\
         [limits]\n\
         burst = 11\n\
         max_connections = 12\n\
         connections_per_ip = 13\n\
         max_moves = 14\n",
    );
    let output = server(
        &[
            "config",
            "check",
            "--config",
            &file,
            "--max-connections",
            "32",
            "--db",
            "flag.db",
        ],
        &[
            ("GRUNDY_BURST", "21"),
            ("GRUNDY_MAX_CONNECTIONS", "22"),
            ("GRUNDY_DB", "env.db"),
        ],
    )
    .await;
    let config = printed(&output);
    let limits = config["limits"].as_table().expect("[limits]");
    // The flag over the variable over the file.
    assert_eq!(limits["max_connections"].as_integer(), Some(32));
    assert_eq!(config["db"].as_str(), Some("flag.db"));
    // The variable over the file.
    assert_eq!(limits["burst"].as_integer(), Some(21));
    // The file over the default.
    assert_eq!(limits["connections_per_ip"].as_integer(), Some(13));
    assert_eq!(limits["max_moves"].as_integer(), Some(14));
    assert_eq!(config["listen"].as_str(), Some("127.0.0.1:9001"));
    assert_eq!(config["lease_ms"].as_integer(), Some(7000));
    // The default where nothing is said.
    assert_eq!(limits["messages_per_second"].as_integer(), Some(300));
    assert_eq!(config["log_format"].as_str(), Some("text"));

    // The file may come from the environment too.
    let output = server(&["config", "check"], &[("GRUNDY_CONFIG", &file)]).await;
    assert_eq!(printed(&output)["db"].as_str(), Some("file.db"));
}

#[tokio::test]
async fn an_unknown_key_is_refused_with_the_file_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    for (text_of_file, key) in [
        ("db = \"a.db\"\nmax_conections = 5\n", "max_conections"),
        ("[limits]\nburts = 5\n", "limits.burts"),
        ("[limit]\nburst = 5\n", "limit"),
    ] {
        let file = config_file(&dir, text_of_file);
        let output = server(&["config", "check", "--config", &file], &[]).await;
        let said = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert!(output.stdout.is_empty());
        assert!(said.contains(&file), "{said}");
        assert!(said.contains(key), "{key}: {said}");
        // The server refuses to start on it the same way.
        let start = server(&["--config", &file, "--listen", "127.0.0.1:0"], &[]).await;
        assert_eq!(start.status.code(), Some(1), "{}", text(&start.stderr));
        assert!(text(&start.stderr).contains(key));
        assert!(start.stdout.is_empty(), "it must not listen");
    }
}

#[tokio::test]
async fn a_bad_value_is_refused_with_its_key_and_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    for (text_of_file, key, wrong) in [
        (
            "[limits]\nburst = \"many\"\n",
            "limits.burst",
            "expected u32",
        ),
        ("listen = \"nowhere\"\n", "listen", "address"),
        ("lease_ms = 5\n", "lease_ms", "out of range"),
        (
            "trusted_proxy = [\"10.0.0.0/40\"]\n",
            "trusted_proxy",
            "10.0.0.0/40",
        ),
        ("db = \n", "line 1", "string"),
    ] {
        let file = config_file(&dir, text_of_file);
        let output = server(&["config", "check", "--config", &file], &[]).await;
        let said = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{said}");
        assert!(said.contains(&file), "{said}");
        assert!(
            said.contains(key) && said.contains(wrong),
            "{text_of_file}: {said}"
        );
    }
    // A variable's bad value is named by its flag; a bad combination by the
    // key and the flag and variable that set it.
    let output = server(&["config", "check"], &[("GRUNDY_BURST", "many")]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("--burst"),
        "{}",
        text(&output.stderr)
    );
    let output = server(&["config", "check", "--lease-ms", "5"], &[]).await;
    assert_eq!(output.status.code(), Some(1));
    let said = text(&output.stderr);
    assert!(
        said.contains("--lease-ms or GRUNDY_LEASE_MS") && said.contains("out of range"),
        "{said}"
    );
    let missing = dir.path().join("missing.toml");
    let output = server(
        &["config", "check", "--config", &missing.to_string_lossy()],
        &[],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("missing.toml"));
}

#[tokio::test]
async fn passwords_are_masked_in_the_printed_configuration_and_never_logged() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(
        &dir,
        "db = \"postgres://grundy:file-s3cret@db.example:5432/grundy\"\ncluster = true\n",
    );
    let output = server(
        &["config", "check", "--config", &file],
        &[("GRUNDY_BUS", "nats://node:bus-s3cret@bus.example:4222")],
    )
    .await;
    let config = printed(&output);
    let all = text(&output.stdout);
    assert!(!all.contains("s3cret"), "{all}");
    assert_eq!(
        config["db"].as_str(),
        Some("postgres://grundy:***@db.example:5432/grundy")
    );
    assert_eq!(
        config["bus"].as_str(),
        Some("nats://node:***@bus.example:4222")
    );

    // A server that cannot reach its database says so without the password.
    let output = server(
        &["--listen", "127.0.0.1:0"],
        &[
            (
                "GRUNDY_DB",
                "postgres://grundy:db-s3cret@127.0.0.1:1/grundy",
            ),
            ("RUST_LOG", "trace"),
        ],
    )
    .await;
    assert!(!output.status.success());
    let said = text(&output.stderr) + &text(&output.stdout);
    assert!(said.contains("grundy:***@127.0.0.1:1"), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
}

#[tokio::test]
async fn a_server_started_with_a_file_serves_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let file = config_file(&dir, "[limits]\nburst = 17\nmax_moves = 99\n");
    let db = dir.path().join("grundy.db");
    let mut server = Process::start_with(&db, &["--config", &file, "--burst", "18"]).await;
    let mut c = Client::raw(&server.url).await;
    let welcome = c.request(json!({"type": "hello", "version": 1})).await;
    assert_eq!(welcome["type"], "welcome", "{welcome}");
    assert_eq!(welcome["limits"]["max_moves"], 99, "{welcome}");
    assert_eq!(welcome["limits"]["burst"], 18, "{welcome}");
    assert!(server.terminate().await.success());
}

#[tokio::test]
async fn the_example_file_of_the_deployment_is_read_as_documented() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/grundy.toml");
    let output = server(&["config", "check", "--config", example], &[]).await;
    let config = printed(&output);
    assert_eq!(config["db"].as_str(), Some("/var/lib/grundy/grundy.db"));
    assert_eq!(config["log_format"].as_str(), Some("json"));
    assert_eq!(
        config["trusted_proxy"].as_array().map(Vec::len),
        Some(1),
        "{config}"
    );
}
