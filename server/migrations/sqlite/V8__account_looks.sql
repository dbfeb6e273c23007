-- What each account's name reads as (look-alike letters folded, see
-- names.rs `reads_as`): unique, so that no two accounts have names that read
-- the same. Filled in by the server for accounts made before (`fill_looks`).
ALTER TABLE accounts ADD COLUMN username_look TEXT;
CREATE UNIQUE INDEX accounts_username_look ON accounts (username_look);
