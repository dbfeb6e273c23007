-- Tournaments in a cluster: like a room, each unfinished tournament has one
-- owner node at an epoch, every takeover raises the epoch, and a write of an
-- older epoch is refused (V2__cluster.sql says why the share lock).

CREATE TABLE tournament_owners (
    tournament TEXT   NOT NULL PRIMARY KEY REFERENCES tournaments (id),
    node       TEXT   NOT NULL,
    epoch      BIGINT NOT NULL
);
CREATE INDEX tournament_owners_node ON tournament_owners (node);

CREATE FUNCTION grundy_fence_tournament(t TEXT, written BIGINT) RETURNS void AS $$
DECLARE
    held BIGINT;
BEGIN
    SELECT epoch INTO held FROM tournament_owners WHERE tournament = t FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'tournament % has no owner, so no write of epoch % is valid', t, written
            USING ERRCODE = 'GR001';
    ELSIF held <> written THEN
        RAISE EXCEPTION 'tournament % is owned at epoch %, so this write of epoch % is refused',
            t, held, written
            USING ERRCODE = 'GR001';
    END IF;
END
$$ LANGUAGE plpgsql;
