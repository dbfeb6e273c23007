//! Reading specs and moves out of `serde_json::Value`s with errors that name the
//! field. Hand-written rather than derived so that every refusal can say exactly
//! which field is wrong and why (serde's derive loses the path inside tagged enums).

use serde_json::{Map, Value};
use smallvec::SmallVec;

/// Where a value sits in the document, for error messages: `heaps[3].size`.
pub fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A short description of a JSON value's kind, for "expected X, got Y".
pub fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".into(),
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

/// Errors raised while reading JSON: the caller turns (path, message) into its own
/// error type (a spec error or a malformed-move error).
pub type Fail = (String, String);

pub fn fail<T>(path: &str, message: impl Into<String>) -> Result<T, Fail> {
    Err((path.to_string(), message.into()))
}

/// A whole number in `0..=max`.
pub fn u64_at(v: &Value, path: &str, max: u64) -> Result<u64, Fail> {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_u64() {
                if x > max {
                    fail(path, format!("must be at most {max}, got {x}"))
                } else {
                    Ok(x)
                }
            } else if n.as_i64().is_some() {
                fail(path, format!("must not be negative, got {n}"))
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.fract() == 0.0 && f > 0.0 {
                    fail(path, format!("must be at most {max}, got {n}"))
                } else if f < 0.0 {
                    fail(path, format!("must not be negative, got {n}"))
                } else {
                    fail(path, format!("must be a whole number, got {n}"))
                }
            }
        }
        other => fail(
            path,
            format!("expected a whole number, got {}", kind(other)),
        ),
    }
}

pub fn array_at<'a>(v: &'a Value, path: &str, max_len: usize) -> Result<&'a Vec<Value>, Fail> {
    match v {
        Value::Array(a) if a.len() > max_len => fail(
            path,
            format!("has {} entries; the limit is {max_len}", a.len()),
        ),
        Value::Array(a) => Ok(a),
        other => fail(path, format!("expected an array, got {}", kind(other))),
    }
}

/// An array of whole numbers, each in `0..=max`.
pub fn u64_array_at(v: &Value, path: &str, max_len: usize, max: u64) -> Result<Vec<u64>, Fail> {
    array_at(v, path, max_len)?
        .iter()
        .enumerate()
        .map(|(i, x)| u64_at(x, &index(path, i), max))
        .collect()
}

/// A JSON object whose fields are read one by one; `finish` refuses the fields
/// nobody asked for, so a typo or a field of another game is not silently ignored.
///
/// Reading a field allocates nothing: paths are spelled out only for an error.
pub struct Obj<'a, 'p> {
    map: &'a Map<String, Value>,
    path: &'p str,
    /// The fields read so far (a handful: kept inline).
    seen: SmallVec<[&'static str; 8]>,
}

impl<'a, 'p> Obj<'a, 'p> {
    pub fn new(v: &'a Value, path: &'p str) -> Result<Self, Fail> {
        match v {
            Value::Object(map) => Ok(Obj {
                map,
                path,
                seen: SmallVec::new(),
            }),
            other => fail(path, format!("expected a JSON object, got {}", kind(other))),
        }
    }

    pub fn path(&self, field: &str) -> String {
        join(self.path, field)
    }

    /// The field if present and not null.
    pub fn opt(&mut self, field: &'static str) -> Option<&'a Value> {
        self.seen.push(field);
        self.map.get(field).filter(|v| !v.is_null())
    }

    pub fn req(&mut self, field: &'static str) -> Result<&'a Value, Fail> {
        match self.opt(field) {
            Some(v) => Ok(v),
            None => fail(&self.path(field), "is required but missing"),
        }
    }

    pub fn req_u64(&mut self, field: &'static str, max: u64) -> Result<u64, Fail> {
        let v = self.req(field)?;
        self.u64_of(v, field, max)
    }

    pub fn opt_u64(&mut self, field: &'static str, max: u64) -> Result<Option<u64>, Fail> {
        match self.opt(field) {
            Some(v) => self.u64_of(v, field, max).map(Some),
            None => Ok(None),
        }
    }

    /// A field's whole number in `0..=max` (the path is spelled out only to
    /// say what is wrong).
    fn u64_of(&self, v: &Value, field: &str, max: u64) -> Result<u64, Fail> {
        match v.as_u64() {
            Some(x) if x <= max => Ok(x),
            _ => u64_at(v, &self.path(field), max),
        }
    }

    pub fn opt_bool(&mut self, field: &'static str) -> Result<Option<bool>, Fail> {
        match self.opt(field) {
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => fail(
                &self.path(field),
                format!("expected true or false, got {}", kind(other)),
            ),
            None => Ok(None),
        }
    }

    pub fn req_u64_array(
        &mut self,
        field: &'static str,
        max_len: usize,
        max: u64,
    ) -> Result<Vec<u64>, Fail> {
        let v = self.req(field)?;
        u64_array_at(v, &self.path(field), max_len, max)
    }

    /// Refuses fields that were not read. `ignore` lists fields another layer owns
    /// (the `game` tag).
    pub fn finish(&self, ignore: &[&str]) -> Result<(), Fail> {
        for key in self.map.keys() {
            if !self.seen.contains(&key.as_str()) && !ignore.contains(&key.as_str()) {
                let known: Vec<&str> = self.seen.to_vec();
                return fail(
                    &self.path(key),
                    format!(
                        "unknown field (this accepts: {})",
                        if known.is_empty() {
                            "no fields".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                );
            }
        }
        Ok(())
    }
}
