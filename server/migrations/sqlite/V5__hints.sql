-- A room may allow hints to both players.
ALTER TABLE rooms ADD COLUMN hints INTEGER NOT NULL DEFAULT 0;

-- The health check's proof that the store still commits (one row,
-- overwritten). Builds of version 4 made it already when they opened a file,
-- so a version 4 file may hold it.
CREATE TABLE IF NOT EXISTS health (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    at_ms INTEGER NOT NULL
);
