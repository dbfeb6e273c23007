-- Seats and events keyed by the room's number, given in creation order, not
-- by its random text id: the rooms being played are the newest, so a commit's
-- new events land in the last pages of the (room_no, seq) index instead of
-- one random page each. The rows are set aside, the tables made again, and
-- the rows copied back in creation order.

CREATE TEMP TABLE old_rooms AS SELECT * FROM rooms;
CREATE TEMP TABLE old_seats AS SELECT * FROM seats;
CREATE TEMP TABLE old_events AS SELECT * FROM events;
DROP TABLE events;
DROP TABLE seats;
DROP TABLE rooms;

CREATE TABLE rooms (
    no             INTEGER PRIMARY KEY,
    id             TEXT    NOT NULL UNIQUE,
    code           TEXT    NOT NULL UNIQUE,
    spec           TEXT    NOT NULL,
    clock          TEXT,
    listed         INTEGER NOT NULL,
    bot            TEXT,
    created_at_ms  INTEGER NOT NULL,
    result         TEXT,
    finished_at_ms INTEGER,
    tournament     TEXT
);
CREATE INDEX rooms_unfinished ON rooms (created_at_ms, id) WHERE result IS NULL;
CREATE TABLE seats (
    room_no INTEGER NOT NULL REFERENCES rooms (no),
    seat    INTEGER NOT NULL CHECK (seat IN (0, 1)),
    name    TEXT,
    token   TEXT    NOT NULL,
    PRIMARY KEY (room_no, seat)
);
CREATE TABLE events (
    room_no INTEGER NOT NULL REFERENCES rooms (no),
    seq     INTEGER NOT NULL,
    at_ms   INTEGER NOT NULL,
    body    TEXT    NOT NULL,
    PRIMARY KEY (room_no, seq)
);

INSERT INTO rooms (id, code, spec, clock, listed, bot, created_at_ms, result, finished_at_ms,
                   tournament)
    SELECT id, code, spec, clock, listed, bot, created_at_ms, result, finished_at_ms, tournament
    FROM old_rooms ORDER BY created_at_ms, id;
INSERT INTO seats (room_no, seat, name, token)
    SELECT rooms.no, s.seat, s.name, s.token FROM old_seats s JOIN rooms ON rooms.id = s.room;
INSERT INTO events (room_no, seq, at_ms, body)
    SELECT rooms.no, e.seq, e.at_ms, e.body FROM old_events e JOIN rooms ON rooms.id = e.room
    ORDER BY rooms.no, e.seq;
DROP TABLE old_rooms;
DROP TABLE old_seats;
DROP TABLE old_events;
