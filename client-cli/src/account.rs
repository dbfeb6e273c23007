//! `grundy account`: open an account, log in and out, change its password,
//! and manage its tokens.
//!
//! A login's token is kept per server in the user's config directory
//! (`~/.config/grundy/tokens.json`, readable by the owner only); `GRUNDY_TOKEN`
//! overrides it for any server. Every command that connects (`play`,
//! `tournament join` …) then plays as the account.

use std::io::{BufRead, IsTerminal};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use grundy_client::account;
use grundy_client::client::{Client, Hello};
use grundy_protocol::wire::{AccountKind, NewToken, Scope, TokenInfo};

use crate::net::token_for;
use crate::net::{words, DEFAULT_SERVER};
use crate::tokens::{keep, kept, tokens_file};

#[derive(Subcommand)]
pub enum Command {
    /// Open an account (asks for a password).
    Create {
        username: String,
        /// A bot's account (shown as a bot everywhere).
        #[arg(long)]
        bot: bool,
        #[command(flatten)]
        server: Server,
    },
    /// Log in: a new token, kept for this server.
    Login {
        username: String,
        #[command(flatten)]
        token: TokenArgs,
        #[command(flatten)]
        server: Server,
    },
    /// Change the password (asks for the current one, then the new one):
    /// every token of the account is revoked and its other connections end;
    /// the new token is kept for this server.
    Password {
        #[command(flatten)]
        server: Server,
    },
    /// Revoke the kept token and forget it.
    Logout {
        #[command(flatten)]
        server: Server,
    },
    /// Who the kept token (or GRUNDY_TOKEN) is.
    Whoami {
        #[command(flatten)]
        server: Server,
        /// The account and token as JSON (the protocol's fields).
        #[arg(long)]
        json: bool,
    },
    /// The account's live tokens.
    Tokens {
        #[command(flatten)]
        server: Server,
        /// As JSON (the protocol's token fields), for scripts.
        #[arg(long)]
        json: bool,
    },
    /// A new token for a bot or a script, printed once (not kept).
    Token {
        #[command(flatten)]
        token: TokenArgs,
        #[command(flatten)]
        server: Server,
    },
    /// Revoke a token by its id (`grundy account tokens` lists them).
    Revoke {
        id: String,
        #[command(flatten)]
        server: Server,
    },
}

#[derive(Args)]
pub struct Server {
    /// The server (default: $GRUNDY_SERVER, else ws://127.0.0.1:7878).
    #[arg(long, env = "GRUNDY_SERVER", default_value = DEFAULT_SERVER, value_parser = crate::net::parse_server)]
    server: String,
}

#[derive(Args)]
pub struct TokenArgs {
    /// A name for the token.
    #[arg(long)]
    name: Option<String>,
    /// What it may do: play, tournaments, account (default: all).
    #[arg(long, value_delimiter = ',', value_parser = parse_scope)]
    scopes: Option<Vec<Scope>>,
    /// It stops working after this many days (default: the server's
    /// `token_default_days`, 90, and no later than the token that makes it).
    #[arg(long)]
    days: Option<u32>,
}

impl TokenArgs {
    fn new_token(self) -> NewToken {
        NewToken {
            name: self.name,
            scopes: self.scopes,
            expires_in_days: self.days,
        }
    }
}

fn parse_scope(text: &str) -> Result<Scope, String> {
    Scope::ALL
        .into_iter()
        .find(|s| s.as_str() == text)
        .ok_or_else(|| format!("{text:?}: scopes are play, tournaments, account"))
}

pub async fn run(command: Command) -> Result<()> {
    match command {
        Command::Create {
            username,
            bot,
            server,
        } => {
            let password = new_password("Password (8 to 128 characters): ")?;
            let mut c = guest(&server.server).await?;
            let kind = if bot {
                AccountKind::Bot
            } else {
                AccountKind::Person
            };
            let account = account::create_account(&mut c, &username, &password, kind)
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            println!(
                "Account {} opened ({}). Log in with `grundy account login {}`.",
                account.username,
                kind_word(account.kind),
                account.username
            );
            Ok(())
        }
        Command::Login {
            username,
            token,
            server,
        } => {
            let password = read_password("Password: ")?;
            let mut c = guest(&server.server).await?;
            let issued = account::login(&mut c, &username, &password, token.new_token())
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            keep(&server.server, Some(&issued.token))?;
            println!(
                "Logged in as {} on {}. The token is kept in {} ({}).",
                issued.account.username,
                server.server,
                tokens_file()?.display(),
                scopes(&issued.info)
            );
            Ok(())
        }
        Command::Password { server } => {
            let mut c = signed_in(&server.server).await?;
            let current = read_password("Current password: ")?;
            let new = new_password("New password (8 to 128 characters): ")?;
            let issued = account::change_password(&mut c, &current, &new)
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            keep(&server.server, Some(&issued.token))?;
            println!(
                "Password of {} changed: every other token is revoked. The new token is kept in {}.",
                issued.account.username,
                tokens_file()?.display(),
            );
            if std::env::var("GRUNDY_TOKEN").is_ok_and(|t| !t.trim().is_empty()) {
                eprintln!("GRUNDY_TOKEN is revoked now: unset it to use the kept token.");
            }
            Ok(())
        }
        Command::Logout { server } => {
            let Some(token) = kept(&server.server)? else {
                bail!("no token is kept for {}", server.server);
            };
            // Revoked on the server first; forgotten here even if that fails
            // (a token the server refuses is no use kept).
            let revoked = match Client::connect_as(&server.server, &Hello::Token(token)).await {
                Ok(mut c) => account::revoke_token(&mut c, None)
                    .await
                    .map_err(|e| words(&e)),
                Err(e) => Err(words(&e)),
            };
            keep(&server.server, None)?;
            match revoked {
                Ok(id) => println!("Logged out: token {id} revoked and forgotten."),
                Err(why) => println!("The token is forgotten here; the server said: {why}."),
            }
            Ok(())
        }
        Command::Whoami { server, json } => {
            let c = signed_in(&server.server).await?;
            let who = c.identity();
            if json {
                let out = serde_json::json!({"account": who.account, "token": who.token});
                println!("{}", serde_json::to_string_pretty(&out)?);
                return Ok(());
            }
            if let (Some(a), Some(t)) = (&who.account, &who.token) {
                println!(
                    "{} ({}), token {} \"{}\" ({})",
                    a.username,
                    kind_word(a.kind),
                    t.id,
                    t.name,
                    scopes(t)
                );
            }
            Ok(())
        }
        Command::Tokens { server, json } => {
            let mut c = signed_in(&server.server).await?;
            let tokens = account::list_tokens(&mut c)
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tokens)?);
                return Ok(());
            }
            let this = c.identity().token.as_ref().map(|t| t.id.clone());
            for t in tokens {
                let mark = if Some(&t.id) == this.as_ref() {
                    " (this one)"
                } else {
                    ""
                };
                let expires = t.expires_at_ms.map_or("never expires".to_string(), |ms| {
                    format!("expires in {} days", days_from_now(ms))
                });
                println!(
                    "{}  \"{}\"  {}  {}{mark}",
                    t.id,
                    t.name,
                    scopes(&t),
                    expires
                );
            }
            Ok(())
        }
        Command::Token { token, server } => {
            let mut c = signed_in(&server.server).await?;
            let issued = account::create_token(&mut c, token.new_token())
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            eprintln!(
                "Token {} \"{}\" ({}) for {}: shown this once.",
                issued.info.id,
                issued.info.name,
                scopes(&issued.info),
                issued.account.username
            );
            println!("{}", issued.token);
            Ok(())
        }
        Command::Revoke { id, server } => {
            let mut c = signed_in(&server.server).await?;
            let id = account::revoke_token(&mut c, Some(&id))
                .await
                .map_err(|e| anyhow::anyhow!(words(&e)))?;
            println!("Token {id} revoked.");
            Ok(())
        }
    }
}

fn kind_word(kind: AccountKind) -> &'static str {
    match kind {
        AccountKind::Person => "a person",
        AccountKind::Bot => "a bot",
    }
}

fn scopes(t: &TokenInfo) -> String {
    let names: Vec<&str> = t.scopes.iter().map(|s| s.as_str()).collect();
    format!("scopes: {}", names.join(", "))
}

fn days_from_now(ms: u64) -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ms.saturating_sub(now).div_ceil(86_400_000)
}

async fn guest(url: &str) -> Result<Client> {
    Client::connect_as(url, &Hello::Guest(None))
        .await
        .map_err(|e| anyhow::anyhow!(words(&e)))
}

/// A connection as the kept token's (or GRUNDY_TOKEN's) account.
async fn signed_in(url: &str) -> Result<Client> {
    let Some(token) = token_for(url)? else {
        bail!("not logged in to {url}: run `grundy account login USERNAME` (or set GRUNDY_TOKEN)");
    };
    Client::connect_as(url, &Hello::Token(token))
        .await
        .map_err(|e| anyhow::anyhow!("{} (log in again?)", words(&e)))
}

/// A password typed without echo at a terminal, or the next line of
/// standard input when it is not one (scripts). An empty one is refused
/// here: sent, it would only count as a wrong password towards a lockout.
fn read_password(prompt: &str) -> Result<String> {
    let password = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt).context("cannot read the password")?
    } else {
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 {
            bail!("no password: standard input ended (a script gives it as the first line)");
        }
        line.trim_end_matches(['\n', '\r']).to_string()
    };
    if password.is_empty() {
        bail!("the password is empty");
    }
    Ok(password)
}

/// A new password, typed twice at a terminal.
fn new_password(prompt: &str) -> Result<String> {
    let password = read_password(prompt)?;
    if std::io::stdin().is_terminal() {
        let again = read_password("The same again: ")?;
        if again != password {
            bail!("the two passwords differ");
        }
    }
    Ok(password)
}
