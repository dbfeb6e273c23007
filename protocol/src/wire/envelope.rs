//! The envelope of a message: one JSON object on the wire, `type` and `id`
//! first, then the body's fields (`{"type":"move","id":7,"room":...}`); in
//! the types, an id beside a body ([`super::ClientMsg`], [`super::ServerMsg`]),
//! so that every message's id is handled in one place.
//!
//! Written and read by hand rather than with `#[serde(flatten)]`, for two
//! reasons. Order: flatten writes the body's fields before or after the id,
//! never between `type` and the rest, and both the clients' quick readers
//! and the bus (`answered_id`) rely on `{"type":KIND,"id":ID`. Cost: flatten
//! around an internally tagged body buffers the whole message twice, where
//! the body alone buffers it once. Here the body's own read does the one
//! pass it always did; the `id` is taken out of the object as it goes by
//! and kept aside, and is written right after the body's `type`.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::value::{
    BoolDeserializer, BorrowedStrDeserializer, F64Deserializer, I64Deserializer, MapDeserializer,
    SeqDeserializer, StringDeserializer,
};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use serde::{forward_to_deserialize_any, Deserialize};
use serde_json::Value;
use std::borrow::Cow;

use super::{ClientBody, ClientMsg, RequestId, ServerBody, ServerMsg};

/// `body`, a message written as a tagged object (its `type` first), with
/// `"id": id` right after the `type` (`"id": null` when there is none).
pub struct WithId<'a, B: ?Sized> {
    pub id: &'a Option<RequestId>,
    pub body: &'a B,
}

impl<B: Serialize + ?Sized> Serialize for WithId<'_, B> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.body.serialize(AfterType {
            inner: s,
            id: self.id,
        })
    }
}

/// Why a body cannot be written in an envelope.
const NOT_AN_OBJECT: &str = "a message's body is written as an object";

/// A serializer that takes the body's object and adds the id after its
/// first field, the `type`.
struct AfterType<'a, S> {
    inner: S,
    id: &'a Option<RequestId>,
}

/// The body's object, its id not written yet (Some) or written (None).
struct IdAfterFirst<'a, T> {
    inner: T,
    id: Option<&'a Option<RequestId>>,
}

impl<T: SerializeStruct> SerializeStruct for IdAfterFirst<'_, T> {
    type Ok = T::Ok;
    type Error = T::Error;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), T::Error> {
        self.inner.serialize_field(key, value)?;
        match self.id.take() {
            Some(id) => self.inner.serialize_field("id", id),
            None => Ok(()),
        }
    }

    fn end(mut self) -> Result<T::Ok, T::Error> {
        if let Some(id) = self.id.take() {
            self.inner.serialize_field("id", id)?;
        }
        self.inner.end()
    }
}

impl<T: SerializeMap> SerializeMap for IdAfterFirst<'_, T> {
    type Ok = T::Ok;
    type Error = T::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), T::Error> {
        self.inner.serialize_key(key)
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), T::Error> {
        self.inner.serialize_value(value)?;
        match self.id.take() {
            Some(id) => self.inner.serialize_entry("id", id),
            None => Ok(()),
        }
    }

    fn end(mut self) -> Result<T::Ok, T::Error> {
        if let Some(id) = self.id.take() {
            self.inner.serialize_entry("id", id)?;
        }
        self.inner.end()
    }
}

/// The serializer methods of anything but an object: refused.
macro_rules! not_an_object {
    ($($method:ident($($ty:ty),*) -> $ok:ty;)*) => {$(
        fn $method(self, $(_: $ty),*) -> Result<$ok, S::Error> {
            Err(ser::Error::custom(NOT_AN_OBJECT))
        }
    )*};
}

impl<'a, S: Serializer> Serializer for AfterType<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeStruct = IdAfterFirst<'a, S::SerializeStruct>;
    type SerializeMap = IdAfterFirst<'a, S::SerializeMap>;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(IdAfterFirst {
            inner: self.inner.serialize_struct(name, len + 1)?,
            id: Some(self.id),
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(IdAfterFirst {
            inner: self.inner.serialize_map(len.map(|n| n + 1))?,
            id: Some(self.id),
        })
    }

    not_an_object! {
        serialize_bool(bool) -> S::Ok;
        serialize_i8(i8) -> S::Ok;
        serialize_i16(i16) -> S::Ok;
        serialize_i32(i32) -> S::Ok;
        serialize_i64(i64) -> S::Ok;
        serialize_u8(u8) -> S::Ok;
        serialize_u16(u16) -> S::Ok;
        serialize_u32(u32) -> S::Ok;
        serialize_u64(u64) -> S::Ok;
        serialize_f32(f32) -> S::Ok;
        serialize_f64(f64) -> S::Ok;
        serialize_char(char) -> S::Ok;
        serialize_str(&str) -> S::Ok;
        serialize_bytes(&[u8]) -> S::Ok;
        serialize_none() -> S::Ok;
        serialize_unit() -> S::Ok;
        serialize_unit_struct(&'static str) -> S::Ok;
        serialize_unit_variant(&'static str, u32, &'static str) -> S::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(ser::Error::custom(NOT_AN_OBJECT))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(ser::Error::custom(NOT_AN_OBJECT))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(ser::Error::custom(NOT_AN_OBJECT))
    }
}

/// When a bad `id` is refused: before the body is read (a client's
/// message: its `id` is told first, as the field the server names), or
/// only once the body has read (a server's: a notice has no id to check).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdCheck {
    BeforeBody,
    AfterBody,
}

/// Reads a message whose body `B` is an internally tagged enum (which
/// ignores keys it does not know): the body, and what stood under `id`.
/// With [`IdCheck::BeforeBody`] a bad `id` is refused before the body's
/// fields are read.
pub(crate) fn read<'de, D: Deserializer<'de>, B: Deserialize<'de>>(
    d: D,
    check: IdCheck,
    message: &'static str,
) -> Result<(Found, B), D::Error> {
    let mut found = Found::Absent;
    let body = B::deserialize(IdAside {
        inner: d,
        found: &mut found,
        check,
        message,
    })?;
    Ok((found, body))
}

/// What the message held under `id`.
#[derive(Debug)]
pub(crate) enum Found {
    Absent,
    Read(Option<RequestId>),
    /// Not a request id: what it was, to be refused as a request id
    /// refuses it.
    Bad(NotAnId),
    /// More than one `id`.
    Twice,
}

/// A value that is not a request id (null is one: no id).
#[derive(Debug, Clone, Copy)]
pub(crate) enum NotAnId {
    Bool(bool),
    Negative(i64),
    Float(f64),
    Seq,
    Map,
}

impl NotAnId {
    /// The error a request id read from this value gives.
    fn refusal<E: de::Error>(self) -> E {
        let read = match self {
            NotAnId::Bool(b) => RequestId::deserialize(BoolDeserializer::<E>::new(b)),
            NotAnId::Negative(n) => RequestId::deserialize(I64Deserializer::<E>::new(n)),
            NotAnId::Float(x) => RequestId::deserialize(F64Deserializer::<E>::new(x)),
            NotAnId::Seq => {
                RequestId::deserialize(SeqDeserializer::<_, E>::new(std::iter::empty::<()>()))
            }
            NotAnId::Map => {
                RequestId::deserialize(MapDeserializer::<_, E>::new(std::iter::empty::<((), ())>()))
            }
        };
        read.err()
            .unwrap_or_else(|| E::custom("expected a request id"))
    }
}

impl Found {
    /// The id, or the error of a bad one: the words a request id read from
    /// the value itself gives.
    pub(crate) fn into_id<E: de::Error>(self) -> Result<Option<RequestId>, E> {
        match self {
            Found::Absent => Ok(None),
            Found::Read(id) => Ok(id),
            Found::Twice => Err(E::duplicate_field("id")),
            Found::Bad(value) => Err(value.refusal()),
        }
    }

    fn check<E: de::Error>(&self) -> Result<(), E> {
        match *self {
            Found::Twice => Err(E::duplicate_field("id")),
            Found::Bad(value) => Err(value.refusal()),
            Found::Absent | Found::Read(_) => Ok(()),
        }
    }

    /// One more `id` met: as serde's own read of a field, the first bad
    /// value is what is refused, and a second of a good one is a duplicate.
    fn add(&mut self, value: Result<Option<RequestId>, NotAnId>) {
        *self = match (std::mem::replace(self, Found::Absent), value) {
            (Found::Absent, Ok(id)) => Found::Read(id),
            (Found::Absent, Err(bad)) => Found::Bad(bad),
            (Found::Read(_), _) => Found::Twice,
            (kept, _) => kept,
        };
    }
}

/// The message's deserializer, with its `id` taken aside.
struct IdAside<'f, D> {
    inner: D,
    found: &'f mut Found,
    check: IdCheck,
    message: &'static str,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for IdAside<'_, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        let found = self.found;
        let value = self.inner.deserialize_any(Walk {
            visitor,
            found: &mut *found,
            message: self.message,
        })?;
        // Here, out of the inner deserializer: the error has no position,
        // as serde's own errors of a buffered message have none.
        if self.check == IdCheck::BeforeBody {
            found.check::<D::Error>()?;
        }
        Ok(value)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// The body's visitor, handed an object without its `id`.
struct Walk<'f, V> {
    visitor: V,
    found: &'f mut Found,
    /// The message's type name, as serde's refusals name it.
    message: &'static str,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Walk<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "internally tagged enum {}", self.message)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(WithoutId {
            map,
            found: self.found,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(seq)
    }

    // Anything else is refused by the defaults, in the words of serde's
    // own refusal of a message that is not an object.
}

/// An object's entries but `id`, whose value goes to `found`.
struct WithoutId<'f, A> {
    map: A,
    found: &'f mut Found,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for WithoutId<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            let value = match key {
                Key::Borrowed(key) if key != "id" => {
                    return seed
                        .deserialize(BorrowedStrDeserializer::new(key))
                        .map(Some)
                }
                Key::Owned(key) if key != "id" => {
                    return seed.deserialize(StringDeserializer::new(key)).map(Some)
                }
                _ => self.map.next_value_seed(IdValue)?,
            };
            self.found.add(value);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// An object's key, borrowed from the text when it can be.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(key))
            }
            fn visit_str<E>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(key.to_owned()))
            }
            fn visit_string<E>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(key))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Reads the value of an `id` without failing on one that is not a request
/// id (only on text that is not JSON): what it is decides later whether
/// the message is refused.
struct IdValue;

impl<'de> DeserializeSeed<'de> for IdValue {
    type Value = Result<Option<RequestId>, NotAnId>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdValue {
    type Value = Result<Option<RequestId>, NotAnId>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Ok(None))
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(Ok(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Ok(Some(RequestId::Number(n))))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Self::Value, E> {
        Ok(u64::try_from(n)
            .map(|n| Some(RequestId::Number(n)))
            .map_err(|_| NotAnId::Negative(n)))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Self::Value, E> {
        Ok(Err(NotAnId::Float(x)))
    }
    fn visit_bool<E>(self, b: bool) -> Result<Self::Value, E> {
        Ok(Err(NotAnId::Bool(b)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Ok(Some(RequestId::Text(s.to_owned()))))
    }
    fn visit_string<E>(self, s: String) -> Result<Self::Value, E> {
        Ok(Ok(Some(RequestId::Text(s))))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Err(NotAnId::Seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Err(NotAnId::Map))
    }
}

impl Serialize for ClientMsg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WithId {
            id: &self.id,
            body: &self.body,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ClientMsg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (found, body) = read(d, IdCheck::BeforeBody, "ClientMsg")?;
        Ok(ClientMsg {
            id: found.into_id()?,
            body,
        })
    }
}

impl Serialize for ServerMsg {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.body.is_notice() {
            return self.body.serialize(s);
        }
        WithId {
            id: &self.id,
            body: &self.body,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ServerMsg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (found, body) = read::<_, ServerBody>(d, IdCheck::AfterBody, "ServerMsg")?;
        // A notice's `id`, if a sender wrote one, is a field it does not
        // have: ignored, as every unknown field is.
        let id = match body.is_notice() {
            true => None,
            false => found.into_id()?,
        };
        Ok(ServerMsg { id, body })
    }
}

impl JsonSchema for ClientMsg {
    fn schema_name() -> Cow<'static, str> {
        "ClientMsg".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let body = ClientBody::json_schema(generator);
        with_id(body, generator, "Messages a client sends.", |_| {
            Some(IdField::Optional)
        })
    }
}

impl JsonSchema for ServerMsg {
    fn schema_name() -> Cow<'static, str> {
        "ServerMsg".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let body = ServerBody::json_schema(generator);
        with_id(body, generator, "Messages the server sends.", |kind| {
            (!ServerBody::NOTICES.contains(&kind)).then_some(IdField::Required)
        })
    }
}

/// How a message's schema has its `id`: may be left out (a client's, read
/// with a default) or always written (an answer of the server's).
enum IdField {
    Optional,
    Required,
}

/// The schema of a message: its body's (`oneOf` one object per `type`)
/// with the envelope's `id` among each object's properties, as `id_of`
/// says for that `type` (None: it has none).
fn with_id(
    mut body: Schema,
    generator: &mut SchemaGenerator,
    description: &str,
    id_of: impl Fn(&str) -> Option<IdField>,
) -> Schema {
    let id = generator.subschema_for::<Option<RequestId>>().to_value();
    let variants = body
        .get_mut("oneOf")
        .and_then(Value::as_array_mut)
        .map(|variants| variants.iter_mut().filter_map(Value::as_object_mut));
    for variant in variants.into_iter().flatten() {
        let kind = variant
            .get("properties")
            .and_then(|p| p.get("type"))
            .and_then(|t| t.get("const"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some(field) = id_of(&kind) else { continue };
        if let Some(Value::Object(properties)) = variant.get_mut("properties") {
            properties.insert("id".into(), id.clone());
        }
        if let (IdField::Required, Some(Value::Array(required))) =
            (field, variant.get_mut("required"))
        {
            // Right after `type`, where it is written.
            required.insert(1.min(required.len()), Value::from("id"));
        }
    }
    body.insert("description".into(), Value::from(description));
    body
}
