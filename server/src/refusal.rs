//! A command refused: the error code and the message the client gets.

use grundy_protocol::wire::ErrorCode;

/// Why a command was refused, as the `error` message carries it.
pub type Refusal = (ErrorCode, String);

/// A refusal, as an `Err`.
pub fn refuse<T>(code: ErrorCode, message: impl Into<String>) -> Result<T, Refusal> {
    Err((code, message.into()))
}
