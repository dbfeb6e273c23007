-- No token handed out is kept in clear: seat, tournament player and
-- tournament owner tokens are kept as their SHA-256 in hex (64 digits, see
-- secret.rs `hash`), as API tokens' secrets are. PostgreSQL (11 and later)
-- computes it: the tokens written before are hashed here, in the
-- migration's transaction.
UPDATE seats SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
UPDATE tournaments SET owner_token = encode(sha256(convert_to(owner_token, 'UTF8')), 'hex');
UPDATE tournament_players SET token = encode(sha256(convert_to(token, 'UTF8')), 'hex');
-- A tournament game's seat: its player's tournament token's hash, which
-- acts for the seat too.
ALTER TABLE seats ADD COLUMN player_token TEXT;
