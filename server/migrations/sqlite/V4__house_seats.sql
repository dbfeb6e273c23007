-- The seats the server reserved for its own house bot: only those get a bot
-- back after a restart; a name proves nothing.
ALTER TABLE seats ADD COLUMN house INTEGER NOT NULL DEFAULT 0;

-- Before this, the house bot joined like any client, under the name
-- `house-bot (LEVEL)`. So that the bots of matches unfinished at the upgrade
-- come back, such a seat counts as the house's when its room asked for a bot
-- of exactly that level, is unfinished, and no other seat of it carries the
-- name (a person who took the name as well leaves it undecided, and then no
-- seat counts).
UPDATE seats SET house = 1
WHERE name = (SELECT 'house-bot (' || bot || ')' FROM rooms
              WHERE rooms.no = seats.room_no AND rooms.result IS NULL)
  AND NOT EXISTS (SELECT 1 FROM seats other
                  WHERE other.room_no = seats.room_no AND other.seat <> seats.seat
                    AND other.name = seats.name);
