pub mod pairing;
pub mod standings;
