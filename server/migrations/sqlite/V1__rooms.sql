-- Grundy's embedded store (server/src/store/sqlite/): the rooms, their seats
-- and their event logs, keyed by the room's text id. JSON is kept as the text
-- the server wrote. Each later file is one schema version; the store records
-- them in refinery's table and in `PRAGMA user_version`.

CREATE TABLE rooms (
    id             TEXT    NOT NULL PRIMARY KEY,
    code           TEXT    NOT NULL UNIQUE,
    spec           TEXT    NOT NULL,
    clock          TEXT,
    listed         INTEGER NOT NULL,
    bot            TEXT,
    created_at_ms  INTEGER NOT NULL,
    result         TEXT,
    finished_at_ms INTEGER
);
CREATE INDEX rooms_unfinished ON rooms (created_at_ms, id) WHERE result IS NULL;
CREATE TABLE seats (
    room  TEXT    NOT NULL REFERENCES rooms (id),
    seat  INTEGER NOT NULL CHECK (seat IN (0, 1)),
    name  TEXT,
    token TEXT    NOT NULL,
    PRIMARY KEY (room, seat)
);
CREATE TABLE events (
    room  TEXT    NOT NULL REFERENCES rooms (id),
    seq   INTEGER NOT NULL,
    at_ms INTEGER NOT NULL,
    body  TEXT    NOT NULL,
    PRIMARY KEY (room, seq)
);
