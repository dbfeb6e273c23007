use std::io::Write;

use clap::Args as _;

use super::flags::{env_name, Flags, LimitFlags, ServeArgs};
use super::*;

fn file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    file.write_all(text.as_bytes()).expect("written");
    file
}

fn ids(command: clap::Command) -> Vec<(String, Option<String>, Option<String>)> {
    command
        .get_arguments()
        .map(|arg| {
            (
                arg.get_id().to_string(),
                arg.get_long().map(str::to_owned),
                arg.get_env().map(|e| e.to_string_lossy().into_owned()),
            )
        })
        .collect()
}

/// The rule that makes a new flag mechanical: its variable is `GRUNDY_`
/// and its name, its field is its key (a limit's, under `[limits]`).
#[test]
fn every_flag_has_its_variable_and_its_key() {
    let limits: Vec<String> = ids(LimitFlags::augment_args(clap::Command::new("limits")))
        .into_iter()
        .map(|(id, ..)| id)
        .collect();
    let all = ids(ServeArgs::augment_args(clap::Command::new("serve")));
    assert!(all.len() > 10, "{all:?}");
    for (id, long, env) in all {
        let long = long.unwrap_or_else(|| panic!("{id} has no --flag"));
        assert_eq!(long.replace('-', "_"), id);
        assert_eq!(env.as_deref(), Some(env_name(&long).as_str()), "{long}");
        if id == "config" {
            continue;
        }
        // A value of the wrong type: refused, but not as an unknown key.
        let text = if limits.contains(&id) {
            format!("[limits]\n{id} = {{}}\n")
        } else {
            format!("{id} = {{}}\n")
        };
        let refusal = Settings::from_toml(&text).expect_err("a table is no value of a flag");
        assert!(!refusal.contains("unknown"), "--{long}: {refusal}");
    }
}

#[test]
fn a_file_sets_what_it_names_and_the_defaults_stay_for_the_rest() {
    let settings = Settings::from_toml(
        "listen = \"0.0.0.0:80\"\ntrusted_proxy = [\"10.0.0.0/8\", \"192.168.1.1\"]\n\
         [limits]\nburst = 7\n",
    )
    .expect("read");
    let defaults = Settings::default();
    assert_eq!(settings.listen, "0.0.0.0:80".parse().unwrap());
    assert_eq!(settings.trusted_proxy.len(), 2);
    assert_eq!(settings.trusted_proxy[1].to_string(), "192.168.1.1/32");
    assert_eq!(settings.limits.burst, 7);
    assert_eq!(
        settings.limits.max_connections,
        defaults.limits.max_connections
    );
    assert_eq!(settings.db, defaults.db);
}

#[test]
fn every_limit_is_a_key_of_the_file() {
    let defaults = toml::Table::try_from(Config::default().limits).unwrap();
    for key in defaults.keys() {
        let settings = Settings::from_toml(&format!("[limits]\n{key} = 3\n"))
            .unwrap_or_else(|e| panic!("{key}: {e}"));
        let table = toml::Table::try_from(&settings.limits).unwrap();
        assert_eq!(table[key].as_integer(), Some(3), "{key}");
    }
}

#[test]
fn unknown_keys_are_refused_by_name() {
    let refusal =
        Settings::from_toml("listen = \"127.0.0.1:1\"\nmax_conections = 5\n").expect_err("unknown");
    assert!(refusal.contains("max_conections"), "{refusal}");
    assert!(refusal.contains("line 2"), "{refusal}");
    let refusal = Settings::from_toml("[limits]\nburts = 5\n").expect_err("unknown");
    assert!(refusal.contains("`limits.burts`"), "{refusal}");
    assert!(
        refusal.contains("burst"),
        "the known ones are listed: {refusal}"
    );
}

#[test]
fn bad_values_are_refused_with_their_key() {
    for (text, key) in [
        ("listen = \"nowhere\"\n", "`listen`"),
        ("trusted_proxy = [\"10.0.0.0/33\"]\n", "`trusted_proxy`"),
        ("[limits]\nburst = \"many\"\n", "`limits.burst`"),
        ("[limits]\nburst = -1\n", "`limits.burst`"),
        ("log_format = \"xml\"\n", "`log_format`"),
    ] {
        let refusal = Settings::from_toml(text).expect_err(text);
        assert!(refusal.contains(key), "{text}: {refusal}");
    }
}

#[test]
fn the_flags_win_over_the_file_and_a_refusal_names_its_source() {
    let config =
        file("db = \"from-file.db\"\nlease_ms = 1000\n[limits]\nburst = 5\nmax_moves = 9\n");
    let given = Flags {
        db: Some("from-flag.db".into()),
        limits: LimitFlags {
            burst: Some(6),
            ..LimitFlags::default()
        },
        ..Flags::default()
    };
    let settings = Settings::load(Some(config.path()), &given).expect("loaded");
    assert_eq!(settings.db, "from-flag.db");
    assert_eq!(settings.lease_ms, 1000);
    assert_eq!(settings.limits.burst, 6);
    assert_eq!(settings.limits.max_moves, 9);

    let given = Flags {
        lease_ms: Some(10),
        ..Flags::default()
    };
    let refusal = Settings::load(Some(config.path()), &given)
        .expect_err("out of range")
        .to_string();
    assert!(
        refusal.contains("--lease-ms or GRUNDY_LEASE_MS") && refusal.contains("`lease_ms`"),
        "{refusal}"
    );

    let bad = file("lease_ms = 10\n");
    let refusal = Settings::load(Some(bad.path()), &Flags::default())
        .expect_err("out of range")
        .to_string();
    assert!(
        refusal.contains(&bad.path().display().to_string()) && refusal.contains("`lease_ms`"),
        "{refusal}"
    );
}

#[test]
fn keys_that_go_together_are_checked_whichever_layer_set_them() {
    let config = file("cluster = true\n");
    let given = Flags {
        bus: Some("nats://127.0.0.1:4222".into()),
        ..Flags::default()
    };
    assert!(Settings::load(Some(config.path()), &given).is_ok());
    let refusal = Settings::load(None, &given).expect_err("no cluster");
    assert!(refusal.to_string().contains("`bus`"), "{refusal}");
    let zero = Flags {
        limits: LimitFlags {
            burst: Some(0),
            ..LimitFlags::default()
        },
        ..Flags::default()
    };
    let refusal = Settings::load(None, &zero).expect_err("zero").to_string();
    assert!(refusal.contains("`limits.burst`"), "{refusal}");
}

#[test]
fn what_is_printed_holds_no_password() {
    let settings = Settings {
        db: "postgres://grundy:s3cret@db/grundy".into(),
        cluster: true,
        bus: Some("nats://node:s3cret@bus:4222".into()),
        ..Settings::default()
    };
    let printed = settings.masked().to_toml();
    assert!(!printed.contains("s3cret"), "{printed}");
    assert!(
        printed.contains("postgres://grundy:***@db/grundy"),
        "{printed}"
    );
    // What is printed reads back as a file.
    let read = Settings::from_toml(&printed).expect("reads back");
    assert_eq!(read, settings.masked());
}
