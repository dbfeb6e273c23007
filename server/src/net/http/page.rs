//! The web page: plain HTML, CSS and JavaScript modules under `server/web/`,
//! embedded in the binary when it is built (`rust-embed`; a debug build
//! reads them from that folder, so a page edit needs no rebuild). Nothing is
//! fetched from elsewhere at run time.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use super::error::error_response;

#[derive(rust_embed::Embed)]
#[folder = "web/"]
struct Files;

/// Only what the page itself serves: no outside script, style or frame.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; connect-src 'self'; \
    img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; \
    base-uri 'none'; form-action 'none'";

/// A file of the page (`/` is `index.html`), or a JSON 404.
pub async fn asset(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    if method != Method::GET && method != Method::HEAD {
        let mut refused = error_response(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!("{method} {}: the page is read with GET", uri.path()),
        );
        // A 405 names the methods that are allowed (RFC 9110), as the API's do.
        refused
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET,HEAD"));
        return refused;
    }
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html",
        path => path,
    };
    let Some(file) = Files::get(path) else {
        return error_response(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such page: {} (the web app is at /)", uri.path()),
        );
    };
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()[..12]));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes());
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Response::new(Body::from(file.data))
    };
    let headers = response.headers_mut();
    if let Ok(mime) = HeaderValue::from_str(file.metadata.mimetype()) {
        headers.insert(header::CONTENT_TYPE, mime);
    }
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, etag);
    }
    // Asked again each time (a 304 while unchanged): a new server version's
    // page is never mixed with an old one's modules.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    response
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_modules_are_embedded() {
        let index = Files::get("index.html").expect("index.html");
        let text = String::from_utf8_lossy(&index.data);
        // Every module the page loads is one of the embedded files.
        for src in text.split("src=\"").skip(1) {
            let name = src.split('"').next().unwrap_or("").trim_start_matches('/');
            assert!(
                Files::get(name).is_some(),
                "index.html loads missing {name}"
            );
        }
        assert_eq!(index.metadata.mimetype(), "text/html");
    }
}
