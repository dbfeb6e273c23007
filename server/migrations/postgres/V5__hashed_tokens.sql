-- No token handed out is kept in clear: seat, tournament player and
-- tournament owner tokens are kept as their SHA-256 in hex (64 digits, see
-- secret.rs `hash`), as API tokens' secrets are. PostgreSQL (11 and later)
-- computes it: the tokens written before are hashed here, in the
-- migration's transaction.
UPDATE seats SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
UPDATE tournaments SET owner_token = encode(sha256(convert_to(owner_token, 'UTF8')), 'hex');
UPDATE tournament_players SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
-- A tournament game's seat also answers to its player's tournament token
-- (`player_token`, its hash): a tournament tells a returning player that
-- token when it no longer knows the seat's. The games of before get it by
-- the seat's name (unique in its tournament).
ALTER TABLE seats ADD COLUMN player_token TEXT;
UPDATE seats SET player_token = (
    SELECT p.token FROM tournament_players p JOIN rooms r ON r.tournament = p.tournament
    WHERE r.no = seats.room_no AND p.name = seats.name);
-- A seat taken (or resumed by account) by a connection with an account
-- token is tied to that token (its id): the seat token acts only while the
-- account token does (revoked, expired or a new password: the account logs
-- in again and resumes by account). NULL: a guest's, a house bot's, a
-- tournament's seat, or one taken before.
ALTER TABLE seats ADD COLUMN account_token TEXT;
