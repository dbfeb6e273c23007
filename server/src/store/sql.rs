//! The SQL both backends speak. Every statement of the store is written once,
//! with `?1`-style parameters, and run through [`Sql`] on SQLite (rusqlite) or
//! on PostgreSQL (postgres, which numbers them `$1`: translated once, when the
//! statement is prepared and cached). Hand-written because no kept crate puts
//! rusqlite's and postgres's blocking clients behind one interface.

use std::collections::HashMap;

use super::StoreError;

/// Which database a connection talks to, for the few statements that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

/// A value bound to a parameter. A flag is an `Int` (0 or 1); PostgreSQL's
/// `BOOLEAN` columns take it as a boolean.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
    /// PostgreSQL only (`UNNEST(?1::BIGINT[])`): a batch's column of numbers.
    Ints(&'a [i64]),
    /// PostgreSQL only: a batch's column of texts.
    Texts(&'a [&'a str]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}
impl From<u32> for Arg<'_> {
    fn from(v: u32) -> Self {
        Arg::Int(v.into())
    }
}
impl From<u8> for Arg<'_> {
    fn from(v: u8) -> Self {
        Arg::Int(v.into())
    }
}
impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Int(v.into())
    }
}
impl From<f64> for Arg<'_> {
    fn from(v: f64) -> Self {
        Arg::Real(v)
    }
}
impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<&'a String> for Arg<'a> {
    fn from(v: &'a String) -> Self {
        Arg::Text(v)
    }
}
impl<'a> From<&'a [u8]> for Arg<'a> {
    fn from(v: &'a [u8]) -> Self {
        Arg::Blob(v)
    }
}
impl<'a, T: Into<Arg<'a>>> From<Option<T>> for Arg<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Arg::Null, Into::into)
    }
}

/// The arguments of a statement, each converted to an [`Arg`].
macro_rules! args {
    ($($arg:expr),* $(,)?) => {
        &[$($crate::store::sql::Arg::from($arg)),*][..]
    };
}
pub(crate) use args;

/// A value read from a row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// One row of a result. The getters say what was wrong (a NULL, another
/// type) so that the caller can name the row in a `Corrupt` error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row(Vec<Cell>);

impl Row {
    fn cell(&mut self, i: usize) -> Result<Cell, String> {
        self.0
            .get_mut(i)
            .map(|cell| std::mem::replace(cell, Cell::Null))
            .ok_or_else(|| format!("no column {i}"))
    }

    pub(crate) fn opt_int(&mut self, i: usize) -> Result<Option<i64>, String> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Int(v) => Ok(Some(v)),
            other => Err(format!("column {i}: an integer expected, found {other:?}")),
        }
    }
    pub(crate) fn int(&mut self, i: usize) -> Result<i64, String> {
        self.opt_int(i)?
            .ok_or_else(|| format!("column {i}: NULL where an integer belongs"))
    }
    pub(crate) fn flag(&mut self, i: usize) -> Result<bool, String> {
        Ok(self.int(i)? != 0)
    }
    pub(crate) fn real(&mut self, i: usize) -> Result<f64, String> {
        match self.cell(i)? {
            Cell::Real(v) => Ok(v),
            Cell::Int(v) => Ok(v as f64),
            other => Err(format!("column {i}: a number expected, found {other:?}")),
        }
    }
    pub(crate) fn opt_text(&mut self, i: usize) -> Result<Option<String>, String> {
        match self.cell(i)? {
            Cell::Null => Ok(None),
            Cell::Text(v) => Ok(Some(v)),
            other => Err(format!("column {i}: text expected, found {other:?}")),
        }
    }
    pub(crate) fn text(&mut self, i: usize) -> Result<String, String> {
        self.opt_text(i)?
            .ok_or_else(|| format!("column {i}: NULL where text belongs"))
    }
    pub(crate) fn blob(&mut self, i: usize) -> Result<Vec<u8>, String> {
        match self.cell(i)? {
            Cell::Blob(v) => Ok(v),
            other => Err(format!("column {i}: bytes expected, found {other:?}")),
        }
    }
}

/// What kind of failure a statement met, for the errors that have a meaning
/// of their own (a duplicate key, a missing parent row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// A primary key or a unique index.
    Unique,
    ForeignKey,
    /// A write of a room's old owner (PostgreSQL's `grundy_fence`, SQLSTATE
    /// `GR001`).
    Fenced,
    Other,
}

/// A failed statement: what kind, and the database's own words.
#[derive(Debug, Clone)]
pub(crate) struct DbError {
    pub fault: Fault,
    pub message: String,
    pub dialect: Dialect,
}

impl From<DbError> for StoreError {
    fn from(e: DbError) -> Self {
        if e.fault == Fault::Fenced {
            return StoreError::LeaseLost(e.message);
        }
        match e.dialect {
            Dialect::Sqlite => StoreError::Sqlite(e.message),
            Dialect::Postgres => StoreError::Postgres(e.message),
        }
    }
}

/// A connection that runs the store's statements.
pub(crate) trait Sql {
    fn dialect(&self) -> Dialect;
    /// Runs one statement; the number of rows it changed.
    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError>;
    /// Runs one query; every row it returns.
    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError>;
    /// Runs statements with no parameters (transactions, savepoints, schema).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs `insert`, an INSERT of one row into a table keyed by an integer
    /// `no` that the database assigns, and returns that `no`.
    fn insert_no(&mut self, insert: &str, args: &[Arg<'_>]) -> Result<i64, DbError>;

    /// The first row, if any.
    fn query_one(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }

    /// Starts the write transaction of a batch.
    fn begin_write(&mut self) -> Result<(), DbError> {
        self.batch(match self.dialect() {
            // Takes the write lock at once, so the batch never meets
            // SQLITE_BUSY half way.
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        })
    }
}

/// Runs `read` in one read transaction: a consistent view across its queries.
pub(crate) fn in_read<C: Sql + ?Sized, T>(
    conn: &mut C,
    read: impl FnOnce(&mut C) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    conn.batch(match conn.dialect() {
        Dialect::Sqlite => "BEGIN",
        Dialect::Postgres => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
    })?;
    let out = read(conn);
    let end = conn.batch(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
    let out = out?;
    end?;
    Ok(out)
}

// ---- SQLite ----

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match *self {
            Arg::Null => ToSqlOutput::Owned(Value::Null),
            Arg::Int(v) => ToSqlOutput::Owned(Value::Integer(v)),
            Arg::Real(v) => ToSqlOutput::Owned(Value::Real(v)),
            Arg::Text(v) => ToSqlOutput::Borrowed(ValueRef::Text(v.as_bytes())),
            Arg::Blob(v) => ToSqlOutput::Borrowed(ValueRef::Blob(v)),
            Arg::Ints(_) | Arg::Texts(_) => {
                return Err(rusqlite::Error::ToSqlConversionFailure(
                    "SQLite has no array parameters".into(),
                ))
            }
        })
    }
}

fn sqlite_error(e: rusqlite::Error) -> DbError {
    use rusqlite::ffi;
    let fault = match e.sqlite_error() {
        Some(err) if err.code == ffi::ErrorCode::ConstraintViolation => match err.extended_code {
            ffi::SQLITE_CONSTRAINT_PRIMARYKEY | ffi::SQLITE_CONSTRAINT_UNIQUE => Fault::Unique,
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Fault::ForeignKey,
            _ => Fault::Other,
        },
        _ => Fault::Other,
    };
    DbError {
        fault,
        message: e.to_string(),
        dialect: Dialect::Sqlite,
    }
}

impl Sql for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let changed = self
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(args)))
            .map_err(sqlite_error)?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        use rusqlite::types::ValueRef;
        let mut stmt = self.prepare_cached(sql).map_err(sqlite_error)?;
        let columns = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args))
            .map_err(sqlite_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sqlite_error)? {
            let mut cells = Vec::with_capacity(columns);
            for i in 0..columns {
                cells.push(match row.get_ref(i).map_err(sqlite_error)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(v) => Cell::Text(String::from_utf8_lossy(v).into_owned()),
                    ValueRef::Blob(v) => Cell::Blob(v.to_vec()),
                });
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.execute_batch(sql).map_err(sqlite_error)
    }

    /// `no` is the rowid (`INTEGER PRIMARY KEY`). Not `RETURNING no`: SQLite
    /// runs a RETURNING clause as a trigger, and a statement with a trigger
    /// keeps a statement journal, a copy of every page it changes.
    fn insert_no(&mut self, insert: &str, args: &[Arg<'_>]) -> Result<i64, DbError> {
        self.exec(insert, args)?;
        Ok(self.last_insert_rowid())
    }
}

// ---- PostgreSQL ----

impl postgres::types::ToSql for Arg<'_> {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        use postgres::types::Type;
        match *self {
            Arg::Null => Ok(postgres::types::IsNull::Yes),
            Arg::Int(v) => match *ty {
                Type::INT8 => v.to_sql(ty, out),
                Type::INT4 => i32::try_from(v)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(v)?.to_sql(ty, out),
                Type::BOOL => (v != 0).to_sql(ty, out),
                Type::FLOAT8 => (v as f64).to_sql(ty, out),
                _ => Err(format!("an integer cannot be bound as {ty}").into()),
            },
            Arg::Real(v) => v.to_sql(ty, out),
            Arg::Text(v) => v.to_sql(ty, out),
            Arg::Blob(v) => v.to_sql(ty, out),
            Arg::Ints(v) => v.to_sql(ty, out),
            Arg::Texts(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_: &postgres::types::Type) -> bool {
        // Checked in `to_sql`, where the value is known (NULL fits anything).
        true
    }

    postgres::types::to_sql_checked!();
}

/// A PostgreSQL connection with its prepared statements, keyed by the
/// store's text of them.
pub(crate) struct PgConn {
    pub client: postgres::Client,
    statements: HashMap<String, postgres::Statement>,
    /// When a statement last went through `Sql`.
    used: std::time::Instant,
}

impl PgConn {
    pub(crate) fn new(client: postgres::Client) -> PgConn {
        PgConn {
            client,
            statements: HashMap::new(),
            used: std::time::Instant::now(),
        }
    }

    /// How long since a statement last went through.
    pub(crate) fn idle_for(&self) -> std::time::Duration {
        self.used.elapsed()
    }

    fn statement(&mut self, sql: &str) -> Result<postgres::Statement, DbError> {
        self.used = std::time::Instant::now();
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare(&dollar_parameters(sql))
            .map_err(pg_error)?;
        self.statements.insert(sql.to_owned(), statement.clone());
        Ok(statement)
    }
}

/// `?1` → `$1`: the store's statements hold no `?` but their parameters'.
fn dollar_parameters(sql: &str) -> String {
    sql.replace('?', "$")
}

/// The SQLSTATE `grundy_fence` raises (migrations/postgres/V2__cluster.sql).
const FENCED: &str = "GR001";

pub(crate) fn pg_error(e: postgres::Error) -> DbError {
    use postgres::error::SqlState;
    let fault = match e.code() {
        Some(code) if *code == SqlState::UNIQUE_VIOLATION => Fault::Unique,
        Some(code) if *code == SqlState::FOREIGN_KEY_VIOLATION => Fault::ForeignKey,
        Some(code) if code.code() == FENCED => Fault::Fenced,
        _ => Fault::Other,
    };
    // The server's own message, not only "db error".
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        // "error connecting to server: Connection refused (os error 111)"
        None => match std::error::Error::source(&e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    };
    DbError {
        fault,
        message,
        dialect: Dialect::Postgres,
    }
}

impl Sql for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn exec(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<u64, DbError> {
        let statement = self.statement(sql)?;
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
            args.iter().map(|a| a as _).collect();
        self.client.execute(&statement, &params).map_err(pg_error)
    }

    fn query(&mut self, sql: &str, args: &[Arg<'_>]) -> Result<Vec<Row>, DbError> {
        use postgres::types::Type;
        let statement = self.statement(sql)?;
        let params: Vec<&(dyn postgres::types::ToSql + Sync)> =
            args.iter().map(|a| a as _).collect();
        let rows = self.client.query(&statement, &params).map_err(pg_error)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut cells = Vec::with_capacity(row.len());
            for (i, column) in row.columns().iter().enumerate() {
                let cell = match *column.type_() {
                    Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map(Cell::Int)),
                    Type::INT4 => row
                        .try_get::<_, Option<i32>>(i)
                        .map(|v| v.map(|v| Cell::Int(v.into()))),
                    Type::INT2 => row
                        .try_get::<_, Option<i16>>(i)
                        .map(|v| v.map(|v| Cell::Int(v.into()))),
                    Type::BOOL => row
                        .try_get::<_, Option<bool>>(i)
                        .map(|v| v.map(|v| Cell::Int(v.into()))),
                    Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map(|v| v.map(Cell::Real)),
                    Type::BYTEA => row
                        .try_get::<_, Option<Vec<u8>>>(i)
                        .map(|v| v.map(Cell::Blob)),
                    _ => row
                        .try_get::<_, Option<String>>(i)
                        .map(|v| v.map(Cell::Text)),
                };
                cells.push(cell.map_err(pg_error)?.unwrap_or(Cell::Null));
            }
            out.push(Row(cells));
        }
        Ok(out)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.used = std::time::Instant::now();
        self.client.batch_execute(sql).map_err(pg_error)
    }

    fn insert_no(&mut self, insert: &str, args: &[Arg<'_>]) -> Result<i64, DbError> {
        let no = self
            .query(&format!("{insert} RETURNING no"), args)?
            .into_iter()
            .next()
            .map(|mut row| row.int(0));
        match no {
            Some(Ok(no)) => Ok(no),
            Some(Err(message)) => Err(DbError {
                fault: Fault::Other,
                message,
                dialect: Dialect::Postgres,
            }),
            None => Err(DbError {
                fault: Fault::Other,
                message: "an INSERT ... RETURNING no returned no row".to_string(),
                dialect: Dialect::Postgres,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_numbered_with_dollars_for_postgres() {
        assert_eq!(
            dollar_parameters("SELECT a FROM t WHERE b = ?1 OR c = ?2"),
            "SELECT a FROM t WHERE b = $1 OR c = $2"
        );
    }

    #[test]
    fn a_row_names_what_it_lacks() {
        let mut row = Row(vec![Cell::Null, Cell::Text("x".into()), Cell::Int(1)]);
        assert_eq!(row.opt_int(0), Ok(None));
        assert!(row.int(1).unwrap_err().contains("integer expected"));
        assert_eq!(row.flag(2), Ok(true));
        assert!(row.text(7).unwrap_err().contains("no column 7"));
    }
}
