-- No token handed out is kept in clear: seat, tournament player and
-- tournament owner tokens are kept as their SHA-256 in hex (64 digits, see
-- secret.rs `hash`), as API tokens' secrets are. SQLite has no SHA-256, so
-- this migration marks every token written before as `clear:` and the
-- server hashes the marked ones right after the migrations run, in Rust
-- (store/sqlite/migrate.rs `hash_clear_tokens`): a mark is unambiguous where
-- a token's length would not be, and a crash between the two leaves marks
-- that the next start hashes.
UPDATE seats SET token = 'clear:' || token;
UPDATE tournaments SET owner_token = 'clear:' || owner_token;
UPDATE tournament_players SET token = 'clear:' || token;
-- A tournament game's seat: its player's tournament token's hash, which
-- acts for the seat too.
ALTER TABLE seats ADD COLUMN player_token TEXT;
