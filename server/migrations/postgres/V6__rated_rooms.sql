-- A casual room may be rated: its end moves both players' ratings (written
-- with the result, in the same transaction).
ALTER TABLE rooms ADD COLUMN rated BOOLEAN NOT NULL DEFAULT FALSE;
