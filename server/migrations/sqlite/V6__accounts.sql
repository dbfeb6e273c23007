-- Accounts: a password kept only as its Argon2id hash (a PHC string), a token
-- only as the SHA-256 of its secret; ratings per account and engine family.
-- Who holds a seat and who registered: the kind of player and the account
-- (NULL in older rows). The name-keyed `ratings` stay as unclaimed history.

ALTER TABLE seats ADD COLUMN kind TEXT;
ALTER TABLE seats ADD COLUMN account INTEGER;
ALTER TABLE tournament_players ADD COLUMN account INTEGER;
CREATE TABLE accounts (
    id            INTEGER NOT NULL PRIMARY KEY,
    username      TEXT    NOT NULL,
    username_key  TEXT    NOT NULL UNIQUE,
    kind          TEXT    NOT NULL,
    password_hash TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE TABLE api_tokens (
    id            TEXT    NOT NULL PRIMARY KEY,
    account       INTEGER NOT NULL REFERENCES accounts (id),
    name          TEXT    NOT NULL,
    scopes        TEXT    NOT NULL,
    secret_sha256 BLOB    NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER,
    revoked_at_ms INTEGER
);
CREATE TABLE account_ratings (
    family     TEXT    NOT NULL,
    account    INTEGER NOT NULL REFERENCES accounts (id),
    rating     REAL    NOT NULL,
    deviation  REAL    NOT NULL,
    volatility REAL    NOT NULL,
    games      INTEGER NOT NULL,
    PRIMARY KEY (family, account)
);
