-- No token handed out is kept in clear: seat, tournament player and
-- tournament owner tokens are kept as their SHA-256 in hex (64 digits, see
-- secret.rs `hash`), as API tokens' secrets are. SQLite has no SHA-256, so
-- this migration marks every token written before as `clear:` and the
-- server hashes the marked ones right after the migrations run, in Rust
-- (store/sqlite/migrate.rs `hash_clear_tokens`): a mark is unambiguous where
-- a token's length would not be, and a crash between the two leaves marks
-- that the next start hashes.
--
-- A tournament game's seat also answers to its player's tournament token
-- (`player_token`): a tournament tells a returning player that token when it
-- no longer knows the seat's. The games of before get it by the seat's name
-- (unique in its tournament).
ALTER TABLE seats ADD COLUMN player_token TEXT;
UPDATE seats SET player_token = (
    SELECT p.token FROM tournament_players p JOIN rooms r ON r.tournament = p.tournament
    WHERE r.no = seats.room_no AND p.name = seats.name);
UPDATE seats SET token = 'clear:' || token, player_token = 'clear:' || player_token;
UPDATE tournaments SET owner_token = 'clear:' || owner_token;
UPDATE tournament_players SET token = 'clear:' || token;

-- A seat taken (or resumed by account) by a connection with an account
-- token is tied to that token (its id): the seat token acts only while the
-- account token does (revoked, expired or a new password: the account logs
-- in again and resumes by account). NULL: a guest's, a house bot's, a
-- tournament's seat, or one taken before.
ALTER TABLE seats ADD COLUMN account_token TEXT;
