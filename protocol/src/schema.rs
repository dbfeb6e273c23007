//! The JSON Schema of every wire message of protocol v1, generated from the
//! types in [`crate::wire`]. The committed copy is `docs/protocol.schema.json`;
//! `protocol/tests/schema.rs` fails when it drifts from these types.
//!
//! A client's messages are described as the server *reads* them (fields with a
//! default may be left out), the server's as it *writes* them (every field is
//! present unless marked optional). One type is read and written with different
//! rules: `Clock` (`increment_ms` may be omitted in `create_room` but is always
//! sent); the written form is `ServerClock`.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use crate::wire::{ClientMsg, ServerMsg, PROTOCOL_VERSION};

/// Prefix of a definition that the server writes differently from how it reads
/// the type of the same name.
const WRITTEN_PREFIX: &str = "Server";

/// The schema of protocol v1: `#/$defs/ClientMsg` is any message a client may
/// send, `#/$defs/ServerMsg` any message the server sends; the root accepts
/// either. Object keys are sorted, so the text is stable.
pub fn protocol_schema() -> Value {
    let (client_root, client_defs) = definitions::<ClientMsg>(SchemaSettings::draft2020_12());
    let (server_root, server_defs) =
        definitions::<ServerMsg>(SchemaSettings::draft2020_12().for_serialize());

    let mut defs = client_defs.clone();
    let mut renames = Vec::new();
    for (name, schema) in &server_defs {
        match client_defs.get(name) {
            Some(read) if read != schema => {
                renames.push((name.clone(), format!("{WRITTEN_PREFIX}{name}")))
            }
            _ => {}
        }
    }
    for (name, mut schema) in server_defs {
        rename_refs(&mut schema, &renames);
        let name = renames
            .iter()
            .find(|(from, _)| *from == name)
            .map_or(name, |(_, to)| to.clone());
        defs.insert(name, schema);
    }
    let mut server_root = server_root;
    rename_refs(&mut server_root, &renames);

    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": format!("Grundy protocol v{PROTOCOL_VERSION}"),
        "description": "Every message of the Grundy match protocol (docs/protocol.md): one JSON \
            object per WebSocket text frame, tagged by `type`. A frame a client sends is a \
            ClientMsg (#/$defs/ClientMsg), a frame the server sends is a ServerMsg \
            (#/$defs/ServerMsg). `spec`, `move` and `position` are per game (docs/protocol.md, \
            \"Game specs\" and \"Moves\"). Unknown fields are ignored by the server, and should be \
            by clients. Generated from protocol/src/wire/: do not edit by hand \
            (UPDATE_SCHEMA=1 cargo test -p grundy-protocol --test schema).",
        "x-protocol-version": PROTOCOL_VERSION,
        "anyOf": [client_root, server_root],
        "$defs": Value::Object(defs),
    });
    sorted(root)
}

/// The schema of `T` (a `$ref`) and every definition it needs.
fn definitions<T: JsonSchema>(settings: SchemaSettings) -> (Value, Map<String, Value>) {
    let mut generator = settings.into_generator();
    let root = generator.subschema_for::<T>().to_value();
    let defs = generator.take_definitions(true);
    (root, defs)
}

/// Points every `$ref` to a renamed definition at its new name.
fn rename_refs(value: &mut Value, renames: &[(String, String)]) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "$ref" {
                    if let Value::String(r) = v {
                        if let Some((_, to)) = renames
                            .iter()
                            .find(|(from, _)| *r == format!("#/$defs/{from}"))
                        {
                            *r = format!("#/$defs/{to}");
                        }
                    }
                } else {
                    rename_refs(v, renames);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rename_refs(v, renames)),
        _ => {}
    }
}

/// The same value with every object's keys in sorted order (whatever map
/// serde_json was built with).
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// [`protocol_schema`] as the text of `docs/protocol.schema.json`.
pub fn protocol_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&protocol_schema())
        .unwrap_or_else(|e| format!("schema not serialisable: {e}"));
    text.push('\n');
    text
}
