-- Tournaments, kept like rooms (settings, players with their secret tokens,
-- an event log), ratings per engine family and plain name, and the
-- tournament a room's game belongs to.

ALTER TABLE rooms ADD COLUMN tournament TEXT;
CREATE TABLE tournaments (
    id             TEXT    NOT NULL PRIMARY KEY,
    code           TEXT    NOT NULL,
    settings       TEXT    NOT NULL,
    owner_token    TEXT    NOT NULL,
    created_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER
);
CREATE INDEX tournaments_unfinished ON tournaments (created_at_ms, id)
    WHERE finished_at_ms IS NULL;
CREATE TABLE tournament_players (
    tournament TEXT    NOT NULL REFERENCES tournaments (id),
    player     INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    token      TEXT    NOT NULL,
    PRIMARY KEY (tournament, player),
    UNIQUE (tournament, name)
);
CREATE TABLE tournament_events (
    tournament TEXT    NOT NULL REFERENCES tournaments (id),
    seq        INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    body       TEXT    NOT NULL,
    PRIMARY KEY (tournament, seq)
);
CREATE TABLE ratings (
    family     TEXT    NOT NULL,
    player     TEXT    NOT NULL,
    rating     REAL    NOT NULL,
    deviation  REAL    NOT NULL,
    volatility REAL    NOT NULL,
    games      INTEGER NOT NULL,
    PRIMARY KEY (family, player)
);
