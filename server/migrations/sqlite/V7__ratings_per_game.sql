-- Ratings keyed by the game as a person names it (the spec's `game` id:
-- `kayles`, `dawson`, ...) instead of the engine's family. The other
-- families' ids are their one game's id, so their rows keep their meaning;
-- the rows keyed `heaps` pooled every heap game and move to
-- `heaps-pooled` (rating_key.rs `POOLED_HEAPS`: history, never rated again).
ALTER TABLE account_ratings RENAME COLUMN family TO game;
UPDATE ratings SET family = 'heaps-pooled' WHERE family = 'heaps';
UPDATE account_ratings SET game = 'heaps-pooled' WHERE game = 'heaps';

-- How a rated tournament rates: `round` (every game of a round together, at
-- the round's end); NULL for the tournaments created before, which go on
-- rating each game as it ends.
ALTER TABLE tournaments ADD COLUMN rating_period TEXT;

-- A tournament's code is looked up (unique from here on, checked when one is
-- created: older files may hold a code twice, and a code then names the
-- newest).
CREATE INDEX tournaments_code ON tournaments (code);
