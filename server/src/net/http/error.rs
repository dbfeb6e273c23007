//! The JSON body of every HTTP refusal, `{"code", "message"}` (and
//! `retry_after_ms` with a `Retry-After` header when trying later helps):
//! the API's, the page's and a refused WebSocket handshake's. The message is
//! cut like a WebSocket error's, so a refusal never sends back much of what
//! was asked.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use grundy_protocol::names::cut;
use grundy_protocol::wire::MAX_ERROR_MESSAGE_CHARS;
use serde_json::json;

use crate::work::Refused;

/// A refusal: its status and the JSON body that names what is wrong.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
    pub(super) retry_after_ms: Option<u64>,
}

impl ApiError {
    pub(super) fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.into(),
            message: message.into(),
            retry_after_ms: None,
        }
    }

    pub(super) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(super) fn refused(refused: Refused) -> ApiError {
        match refused {
            Refused::Busy { pool } => ApiError {
                retry_after_ms: Some(1000),
                ..ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "busy",
                    format!("the server has as much of this work queued as it takes ({pool}); retry in a second"),
                )
            },
            Refused::Failed => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the server failed at it",
            ),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = cut(&self.message, MAX_ERROR_MESSAGE_CHARS);
        let mut body = json!({"code": self.code, "message": message});
        if let Some(ms) = self.retry_after_ms {
            body["retry_after_ms"] = ms.into();
        }
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(ms) = self.retry_after_ms {
            let seconds = ms.div_ceil(1000).to_string();
            if let Ok(value) = HeaderValue::from_str(&seconds) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

/// A JSON error answer outside a handler (a refused WebSocket handshake).
pub fn error_response(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    ApiError::new(status, code, message).into_response()
}
