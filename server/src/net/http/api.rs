//! The read-only HTTP API (docs/http.md): JSON answers for people's tools
//! and for the web page. Every query a connection can make over the
//! WebSocket is answered by the very same code (`connection::ask`); what the
//! WebSocket has no message for (an analysis, a match's review) is computed
//! on the spec-build pool, bounded like every spec build.
//!
//! Every refusal is a 4xx (a busy pool or a failing store a 503) with a JSON
//! body `{"code", "message"}` that names what is wrong.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use grundy_protocol::short::{moves, position as short_position};
use grundy_protocol::wire::{ClientBody, ClientMsg, MatchRecord, MAX_LISTED_ROOMS};
use grundy_protocol::{Analysis, Position, Rules};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::Mutex;

use super::error::ApiError;
use crate::accounts::Session;
use crate::connection;
use crate::metrics::{self, Gauges};
use crate::node::Node;
use crate::store::{now_ms, WriteOp};

use super::review::{self, Review, ReviewCache};

/// The most bytes of a position `/api/parse` reads (a short form or a JSON
/// spec): room for any random start, well inside a request target's 65,534.
pub const MAX_PARSE_POSITION_BYTES: usize = 32 * 1024;
/// The most bytes of a move `/api/parse` reads.
pub const MAX_PARSE_MOVE_BYTES: usize = 1024;
/// The most winning moves an analysis lists (`limit`'s default and cap).
pub const MAX_LISTED_MOVES: usize = 1000;
/// How long a health check's answer is reused: a stream of `/healthz`
/// requests costs one store write a second at most.
const HEALTH_FRESH: Duration = Duration::from_secs(1);

/// What the handlers share.
#[derive(Clone)]
pub struct Api {
    pub shared: Arc<Node>,
    /// The server stops accepting when this is cancelled.
    pub shutdown: tokio_util::sync::CancellationToken,
    health: Arc<Mutex<Option<(Instant, bool)>>>,
    reviews: Arc<ReviewCache>,
}

impl Api {
    pub fn new(shared: Arc<Node>, shutdown: tokio_util::sync::CancellationToken) -> Api {
        Api {
            shared,
            shutdown,
            health: Arc::default(),
            reviews: Arc::new(ReviewCache::new(review::CACHE_BYTES)),
        }
    }
}

/// The routes: the page, the API, the health check and the metrics.
pub fn router(api: Api) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/api/analyze", get(analyze))
        .route("/api/parse", get(parse))
        .route("/api/rooms", get(rooms))
        .route("/api/matches/{id}", get(match_record))
        .route("/api/matches/{id}/review", get(review))
        .route("/api/tournaments", get(tournaments))
        .route("/api/tournaments/{id}", get(tournament))
        .route("/api/ratings", get(ratings))
        .route("/api/players/{name}", get(player))
        .route("/api/account", get(account))
        .route("/api", get(not_found))
        .route("/api/{*rest}", get(not_found))
        .fallback(super::page::asset)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(api.clone(), bearer))
        .with_state(api)
}

/// The account an `Authorization: Bearer` token proves, put in the request's
/// extensions for the handlers; a request with a token that proves nothing
/// (malformed, unknown, revoked, expired) is refused with a 401, whatever it
/// asked for.
async fn bearer(
    State(api): State<Api>,
    mut request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Some(value) = request.headers().get(header::AUTHORIZATION) else {
        return next.run(request).await;
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let Some(token) = token else {
        return unauthorized("Authorization: give `Bearer <token>`");
    };
    if let Err(refused) = api.shared.accounts.recall_token(token).await {
        return ApiError::refused(refused).into_response();
    }
    match api.shared.accounts.authenticate(token) {
        Ok((session, _, _)) => {
            request.extensions_mut().insert(session);
            next.run(request).await
        }
        Err(refused) => unauthorized(&refused.message),
    }
}

fn unauthorized(message: &str) -> Response {
    let mut response =
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"grundy\""),
    );
    response
}

/// The account the bearer token proves, the token itself, and (with scope
/// `account`) the account's live tokens.
async fn account(State(api): State<Api>, session: Option<axum::Extension<Session>>) -> Answer {
    let Some(axum::Extension(session)) = session else {
        return Ok(unauthorized(
            "this endpoint needs `Authorization: Bearer <token>`",
        ));
    };
    let accounts = &api.shared.accounts;
    let Some((account, token)) = accounts.session_info(&session) else {
        return Ok(unauthorized("this token is gone"));
    };
    let tokens = accounts.tokens(&session).ok();
    Ok(axum::Json(json!({"account": account, "token": token, "tokens": tokens})).into_response())
}

type Answer = Result<Response, ApiError>;

/// The query string read into `T`; a bad one is a 400 naming the problem.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let fields = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(fields)
            .map(Query)
            .map_err(|e| match e.path().to_string().as_str() {
                "." => ApiError::bad_request(format!("query: {}", e.inner())),
                field => ApiError::bad_request(format!("{field}: {}", e.inner())),
            })
    }
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no such endpoint: {} (see docs/http.md)", uri.path()),
    )
}

async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} {}: this endpoint only answers GET", method, uri.path()),
    )
}

/// 200 while the server accepts connections, its store commits a write, and
/// (a cluster's node) it holds its lease and its bus is connected; 503
/// otherwise. A cluster's node says its id and whether it holds its lease.
async fn healthz(State(api): State<Api>) -> Response {
    let node = api
        .shared
        .store
        .cluster()
        .map(|cluster| (cluster.node(), cluster.holds_lease()));
    let health = |ok: bool, message: &str| {
        let mut body = json!({"status": if ok { "ok" } else { "unavailable" }, "message": message});
        if let Some((id, held)) = &node {
            body["node"] = json!(**id);
            body["lease"] = json!(held);
        }
        health(ok, body)
    };
    if api.shutdown.is_cancelled() {
        return health(false, "shutting down");
    }
    if node.as_ref().is_some_and(|(_, held)| !held) {
        return health(false, "this node does not hold its cluster lease");
    }
    if api.shared.bus.as_ref().is_some_and(|bus| !bus.connected()) {
        return health(false, "the bus is not connected");
    }
    let mut last = api.health.lock().await;
    let ok = match *last {
        Some((at, ok)) if at.elapsed() < HEALTH_FRESH => ok,
        _ => {
            let write = api.shared.store.write(WriteOp::Probe { at_ms: now_ms() });
            let ok = matches!(
                tokio::time::timeout(Duration::from_secs(5), write).await,
                Ok(Ok(Ok(())))
            );
            *last = Some((Instant::now(), ok));
            ok
        }
    };
    if ok {
        health(true, "accepting; the store commits")
    } else {
        health(false, "the store does not commit writes")
    }
}

fn health(ok: bool, body: Value) -> Response {
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

async fn metrics(State(api): State<Api>) -> Response {
    let shared = &api.shared;
    let gauges = Gauges::default();
    gauges
        .tournaments
        .set(shared.tournaments.list().len() as i64);
    gauges.house_bots.set(shared.house.bots().running() as i64);
    let queued = crate::outbox::BUDGET.queued();
    gauges
        .queued_bytes
        .set(i64::try_from(queued).unwrap_or(i64::MAX));
    let gauges = Gauges {
        node: shared
            .store
            .cluster()
            .map(|cluster| (cluster.node().to_string(), cluster.holds_lease())),
        ..gauges
    };
    let text = metrics::render(gauges);
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyzeQuery {
    spec: String,
    limit: Option<usize>,
}

/// `grundy analyze --json` over HTTP.
async fn analyze(State(api): State<Api>, Query(q): Query<AnalyzeQuery>) -> Answer {
    let limit = listing_limit(q.limit)?;
    let spec: Value = serde_json::from_str(&q.spec).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_spec",
            format!("spec: not JSON: {e}"),
        )
    })?;
    let analysis = api
        .shared
        .spec_builds
        .run(move || {
            let position = Position::from_spec(&spec)?;
            Ok::<_, grundy_protocol::SpecError>(Analysis::of(&position, limit))
        })
        .await
        .map_err(ApiError::refused)?
        .map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "bad_spec",
                format!("spec refused: {e}"),
            )
        })?;
    Ok(axum::Json(analysis).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ParseQuery {
    position: Option<String>,
    /// A room whose current position `move` is read at.
    room: Option<String>,
    #[serde(rename = "move")]
    mv: Option<String>,
}

/// A position typed in the short form (or its JSON spec) read by the
/// engine's one reading, `grundy analyze`'s: its spec and its short form. With
/// `move`, that move typed at the position (or at a room's current one, which
/// no spec may describe: a Darkraft grid after a move), read and checked: its
/// wire JSON and its short form. The web app asks this rather than parse
/// them itself.
async fn parse(State(api): State<Api>, Query(q): Query<ParseQuery>) -> Answer {
    for (name, given, most) in [
        ("position", q.position.as_ref(), MAX_PARSE_POSITION_BYTES),
        ("move", q.mv.as_ref(), MAX_PARSE_MOVE_BYTES),
    ] {
        if let Some(given) = given.filter(|g| g.len() > most) {
            return Err(ApiError::bad_request(format!(
                "{name}: at most {most} bytes, got {}",
                given.len()
            )));
        }
    }
    let start = match (q.position, q.room, &q.mv) {
        (Some(_), Some(_), _) => {
            return Err(ApiError::bad_request(
                "room: give a position or a room, not both",
            ))
        }
        (None, Some(_), None) => {
            return Err(ApiError::bad_request(
                "move: required with room, a move as the `grundy play` prompt reads it",
            ))
        }
        (None, None, _) => {
            return Err(ApiError::bad_request(
                "position: required, a position as `grundy analyze` reads it (`nim 3 5 + kayles 7`) or a JSON spec",
            ))
        }
        (Some(text), None, _) => Start::Typed(text),
        (None, Some(room), _) => Start::Room(Box::new(match_of(&api, room).await?)),
    };
    let answer = api
        .shared
        .spec_builds
        .run(move || {
            let (spec, position) = start.read()?;
            let Some(typed) = q.mv else {
                let short = short_position::write(&position);
                return Ok(json!({"spec": spec, "short": short}));
            };
            let (value, mv) = moves::read(&position, &typed).map_err(|e| {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_move", format!("move: {e}"))
            })?;
            Ok(json!({"move": value, "short": moves::write(&mv)}))
        })
        .await
        .map_err(ApiError::refused)??;
    Ok(json_body(answer))
}

/// Where `/api/parse` reads a move: a position typed, or a room's match.
enum Start {
    Typed(String),
    Room(Box<MatchRecord>),
}

impl Start {
    /// The spec and the position: the one typed, or the room's now (its
    /// start with its moves played).
    fn read(self) -> Result<(Value, Position), ApiError> {
        let bad_spec =
            |message: String| ApiError::new(StatusCode::BAD_REQUEST, "bad_spec", message);
        match self {
            Start::Typed(text) => {
                let spec =
                    short_position::parse(&text).map_err(|e| bad_spec(format!("position: {e}")))?;
                let position = Position::from_spec(&spec).map_err(|e| {
                    // In the words typed: `--k`, `heap 2`.
                    let said = match text.trim_start().starts_with('{') {
                        true => e.to_string(),
                        false => short_position::refusal(&e),
                    };
                    bad_spec(format!("position: {said}"))
                })?;
                Ok((spec, position))
            }
            Start::Room(record) => {
                let internal =
                    |e: String| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e);
                let mut position = Position::from_spec(&record.spec)
                    .map_err(|e| internal(format!("stored spec refused: {e}")))?;
                for (ply, recorded) in record.moves.iter().enumerate() {
                    position
                        .parse_move(&recorded.mv)
                        .and_then(|mv| position.play(&mv))
                        .map_err(|e| internal(format!("stored move {ply} refused: {e}")))?;
                }
                Ok((record.spec, position))
            }
        }
    }
}

fn listing_limit(limit: Option<usize>) -> Result<usize, ApiError> {
    match limit.unwrap_or(MAX_LISTED_MOVES) {
        n @ 0..=MAX_LISTED_MOVES => Ok(n),
        n => Err(ApiError::bad_request(format!(
            "limit: must be 0 to {MAX_LISTED_MOVES}, got {n}"
        ))),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoomsQuery {
    limit: Option<u32>,
    offset: Option<u64>,
}

async fn rooms(State(api): State<Api>, Query(q): Query<RoomsQuery>) -> Answer {
    let limit = q.limit.unwrap_or(100);
    if !(1..=MAX_LISTED_ROOMS).contains(&limit) {
        return Err(ApiError::bad_request(format!(
            "limit: must be 1 to {MAX_LISTED_ROOMS}, got {limit}"
        )));
    }
    let msg = ClientMsg {
        id: None,
        body: ClientBody::ListRooms {
            limit: Some(limit),
            offset: q.offset,
        },
    };
    let answer = ask(&api, msg).await?;
    Ok(json_body(without_envelope(answer)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MatchQuery {
    download: Option<bool>,
}

async fn match_record(
    State(api): State<Api>,
    Path(key): Path<String>,
    Query(q): Query<MatchQuery>,
) -> Answer {
    let record = match_record_of(&api, key).await?;
    let room = record["room"].as_str().unwrap_or("match").to_string();
    let mut response = json_body(record);
    if q.download == Some(true) {
        // Ids are hexadecimal digits: safe in a header as they are.
        let disposition = format!("attachment; filename=\"grundy-{room}.json\"");
        if let Ok(value) = HeaderValue::from_str(&disposition) {
            response
                .headers_mut()
                .insert(header::CONTENT_DISPOSITION, value);
        }
    }
    Ok(response)
}

/// No parameters: any is refused by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoQuery {}

/// A match's record (`get_match`), by id or code.
async fn match_record_of(api: &Api, key: String) -> Result<Value, ApiError> {
    let mut answer = ask(
        api,
        ClientMsg {
            id: None,
            body: ClientBody::GetMatch { room: key },
        },
    )
    .await?;
    Ok(answer["record"].take())
}

/// A match's record as its type.
async fn match_of(api: &Api, key: String) -> Result<MatchRecord, ApiError> {
    let record = match_record_of(api, key).await?;
    serde_json::from_value(record).map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the record did not read back: {e}"),
        )
    })
}

/// A match replayed by the engine: the position before each move, who was
/// winning it, and each move that gave a won position away (with what would
/// have won).
async fn review(
    State(api): State<Api>,
    Path(key): Path<String>,
    Query(_): Query<NoQuery>,
) -> Answer {
    let record = match_of(&api, key).await?;
    if let Some(kept) = api.reviews.get(&record.room) {
        return Ok(json_text(kept.to_string()));
    }
    let (room, finished) = (record.room.clone(), record.result.is_some());
    let text = api
        .shared
        .spec_builds
        .run(move || {
            Review::of(&record).and_then(|r| serde_json::to_string(&r).map_err(|e| e.to_string()))
        })
        .await
        .map_err(ApiError::refused)?
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e))?;
    // A finished match's review never changes.
    if finished {
        api.reviews.put(&room, text.as_str().into());
    }
    Ok(json_text(text))
}

async fn tournaments(State(api): State<Api>, Query(_): Query<NoQuery>) -> Answer {
    let answer = ask(
        &api,
        ClientMsg {
            id: None,
            body: ClientBody::ListTournaments,
        },
    )
    .await?;
    Ok(json_body(without_envelope(answer)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TournamentQuery {
    round: Option<u32>,
}

async fn tournament(
    State(api): State<Api>,
    Path(key): Path<String>,
    Query(q): Query<TournamentQuery>,
) -> Answer {
    let msg = ClientMsg {
        id: None,
        body: ClientBody::GetTournament {
            tournament: key,
            round: q.round,
        },
    };
    let mut answer = ask(&api, msg).await?;
    Ok(json_body(answer["state"].take()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RatingsQuery {
    game: Option<String>,
    /// The older name of `game`.
    family: Option<String>,
    limit: Option<u32>,
}

async fn ratings(State(api): State<Api>, Query(q): Query<RatingsQuery>) -> Answer {
    let Some(game) = q.game.or(q.family) else {
        return Err(ApiError::bad_request(
            "game: required, a game id such as nim or kayles (see docs/games.md)",
        ));
    };
    // Over the WebSocket an unknown game has no ratings; here it is a typo
    // worth naming.
    if !crate::rating_key::known_key(&game) {
        return Err(ApiError::bad_request(format!(
            "game: unknown game {game:?} (see docs/games.md)"
        )));
    }
    let msg = ClientMsg {
        id: None,
        body: ClientBody::GetRatings {
            game: Some(game),
            family: None,
            limit: q.limit,
        },
    };
    let answer = ask(&api, msg).await?;
    Ok(json_body(without_envelope(answer)))
}

/// The most games and tournaments `/api/players/{name}` lists (`games`,
/// `tournaments`), and its default.
pub const MAX_PLAYER_LIST: usize = 100;
const DEFAULT_PLAYER_LIST: usize = 20;
/// How many of an account's latest tournaments its rating history is read
/// from: the history is bounded as every answer is.
pub const HISTORY_TOURNAMENTS: usize = 100;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayerQuery {
    games: Option<usize>,
    tournaments: Option<usize>,
}

fn player_list(field: &str, n: Option<usize>) -> Result<usize, ApiError> {
    match n.unwrap_or(DEFAULT_PLAYER_LIST) {
        n @ 1..=MAX_PLAYER_LIST => Ok(n),
        n => Err(ApiError::bad_request(format!(
            "{field}: must be 1 to {MAX_PLAYER_LIST}, got {n}"
        ))),
    }
}

/// An account's profile: its ratings, its rating after each rated round,
/// its latest finished games and its tournaments.
async fn player(
    State(api): State<Api>,
    Path(name): Path<String>,
    Query(q): Query<PlayerQuery>,
) -> Answer {
    let games = player_list("games", q.games)?;
    let listed = player_list("tournaments", q.tournaments)?;
    let found = api
        .shared
        .accounts
        .named(&name)
        .await
        .map_err(ApiError::refused)?;
    let Some((id, account)) = found else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_player",
            format!("no account named {name:?}"),
        ));
    };
    let store = api.shared.store.clone();
    let history = api
        .shared
        .store_reads
        .run(move || store.player_history(id, games, HISTORY_TOURNAMENTS.max(listed)))
        .await
        .map_err(ApiError::refused)?
        .map_err(|e| {
            tracing::error!("reading {name:?}'s history failed: {e}");
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "could not read the player's history",
            )
        })?;
    let ratings: Vec<Value> = api
        .shared
        .ratings
        .of_account(id)
        .into_iter()
        .map(|(game, r)| {
            json!({"game": game, "name": crate::rating_key::key_name(&game), "rating": r.rating,
                   "deviation": r.deviation, "volatility": r.volatility, "games": r.games})
        })
        .collect();
    Ok(json_body(json!({
        "account": account,
        "ratings": ratings,
        "history": rating_history(&history.tournaments),
        "games": history.games.iter().map(player_game).collect::<Vec<_>>(),
        "tournaments": history.tournaments.iter().take(listed).map(player_tournament)
            .collect::<Vec<_>>(),
    })))
}

/// The game a tournament's games are of: its one start's, or its random
/// starts' game id.
fn tournament_game(settings: &Value) -> String {
    match settings.get("spec") {
        Some(spec) if !spec.is_null() => crate::rating_key::key_of(spec),
        _ => settings["family"].as_str().unwrap_or_default().to_string(),
    }
}

/// Per game, the rating after each rated round, oldest first.
fn rating_history(tournaments: &[crate::store::PlayerTournament]) -> Vec<Value> {
    let mut by_game: std::collections::BTreeMap<String, Vec<(u64, Value)>> = Default::default();
    for t in tournaments {
        let game = tournament_game(&t.settings);
        for &(at_ms, round, rating) in &t.ratings {
            by_game.entry(game.clone()).or_default().push((
                at_ms,
                json!({"at_ms": at_ms, "rating": rating, "tournament": t.tournament,
                       "code": t.code, "round": round}),
            ));
        }
    }
    by_game
        .into_iter()
        .map(|(game, mut points)| {
            points.sort_by_key(|(at, _)| *at);
            let points: Vec<Value> = points.into_iter().map(|(_, p)| p).collect();
            json!({"game": game, "name": crate::rating_key::key_name(&game), "points": points})
        })
        .collect()
}

fn player_game(g: &crate::store::PlayerGame) -> Value {
    let game = crate::rating_key::key_of(&g.spec);
    let won = g.result.winner.map(|w| w == g.seat);
    json!({"room": g.room, "code": g.code, "game": game,
           "name": crate::rating_key::key_name(&game), "seat": g.seat,
           "opponent": g.opponent, "opponent_kind": g.opponent_kind, "result": g.result,
           "won": won, "finished_at_ms": g.finished_at_ms, "tournament": g.tournament})
}

fn player_tournament(t: &crate::store::PlayerTournament) -> Value {
    let game = tournament_game(&t.settings);
    json!({"tournament": t.tournament, "code": t.code, "name": t.settings["name"],
           "game": game, "game_name": crate::rating_key::key_name(&game),
           "rated": t.settings["rated"].as_bool().unwrap_or(false),
           "created_at_ms": t.created_at_ms, "finished_at_ms": t.finished_at_ms})
}

/// Asks as a connection would; an `error` answer becomes the HTTP refusal.
async fn ask(api: &Api, msg: ClientMsg) -> Result<Value, ApiError> {
    let text = connection::ask(&api.shared, msg).await.ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            "no answer in time; retry",
        )
    })?;
    let answer: Value = serde_json::from_str(&text)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", e.to_string()))?;
    if answer["type"] != "error" {
        return Ok(answer);
    }
    let code = answer["code"].as_str().unwrap_or("internal");
    let status = match code {
        "unknown_room" | "unknown_tournament" => StatusCode::NOT_FOUND,
        "busy" | "shutting_down" => StatusCode::SERVICE_UNAVAILABLE,
        "internal" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    let mut error = ApiError::new(status, code, answer["message"].as_str().unwrap_or(""));
    error.retry_after_ms = answer["retry_after_ms"].as_u64();
    Err(error)
}

/// The answer without the WebSocket envelope (`type`, `id`).
fn without_envelope(mut answer: Value) -> Value {
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("type");
        fields.remove("id");
    }
    answer
}

fn json_body(value: Value) -> Response {
    json_text(value.to_string())
}

fn json_text(text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
