-- Several grundy-server nodes on one database (`--cluster`): which nodes are
-- alive, which node owns each room, and the fence that keeps a node that lost
-- a room from writing to it. A database of one server leaves these empty.

-- The cluster this database is: its name on the bus, and the secret its
-- nodes sign what they send each other with (written by the first node).
CREATE TABLE cluster (
    id     SMALLINT PRIMARY KEY CHECK (id = 1),
    name   TEXT     NOT NULL,
    secret BYTEA    NOT NULL
);

-- A node is alive while it renews its lease (the database's clock decides).
CREATE TABLE nodes (
    id         TEXT        PRIMARY KEY,
    started_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    expires_at TIMESTAMPTZ NOT NULL,
    -- Shutting down: its rooms are for the taking now, not at expiry.
    draining   BOOLEAN     NOT NULL DEFAULT FALSE
);

-- The node that owns a room, and the epoch of its ownership: every takeover
-- raises the epoch, and a write of an older epoch is refused.
CREATE TABLE room_owners (
    room_no BIGINT NOT NULL PRIMARY KEY REFERENCES rooms (no),
    node    TEXT   NOT NULL,
    epoch   BIGINT NOT NULL
);
CREATE INDEX room_owners_node ON room_owners (node);

-- The epoch of the node that wrote the event (null: a database of one server).
ALTER TABLE events ADD COLUMN epoch BIGINT;

-- Refuses a write to a room of an epoch other than its owner's. The share
-- lock holds a takeover (which updates the row) until the writing
-- transaction ends, so the new owner reads every event the old one
-- committed, and the old one commits none after.
CREATE FUNCTION grundy_fence(room BIGINT, written BIGINT) RETURNS void AS $$
DECLARE
    held BIGINT;
BEGIN
    SELECT epoch INTO held FROM room_owners WHERE room_no = room FOR SHARE;
    IF NOT FOUND THEN
        IF written IS NOT NULL THEN
            RAISE EXCEPTION 'room % has no owner, so no write of epoch % is valid', room, written
                USING ERRCODE = 'GR001';
        END IF;
    ELSIF written IS NULL OR held <> written THEN
        RAISE EXCEPTION 'room % is owned at epoch %, so this write of epoch % is refused',
            room, held, coalesce(written::text, 'none')
            USING ERRCODE = 'GR001';
    END IF;
END
$$ LANGUAGE plpgsql;

CREATE FUNCTION events_fence() RETURNS trigger AS $$
BEGIN
    PERFORM grundy_fence(NEW.room_no, NEW.epoch);
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

-- Only fenced rows pay for the check: a database of one server writes none,
-- and a single server never runs beside a cluster's nodes (the advisory lock
-- is exclusive for one, shared among the others).
CREATE TRIGGER events_fence BEFORE INSERT ON events
    FOR EACH ROW WHEN (NEW.epoch IS NOT NULL) EXECUTE FUNCTION events_fence();
