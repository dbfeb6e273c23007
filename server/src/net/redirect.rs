//! `--http-redirect-port`: plain HTTP beside the TLS port, every request
//! answered with a permanent redirect (308) to the same host and path over
//! `https://`, so that a browser sent to `http://` lands on the TLS port.
//! Nothing else is served there.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Redirects answered at once; past this a connection is closed unanswered
/// (each is a few hundred bytes and a second or two at most).
const IN_FLIGHT: usize = 1024;

/// How long a connection may take to send its request.
const HEAD_WITHIN: Duration = Duration::from_secs(5);

/// Answers every request on `listener` with a redirect to `https://` on
/// `https_port`, until `stop`.
pub async fn serve(listener: TcpListener, https_port: u16, stop: CancellationToken) {
    let permits = Arc::new(Semaphore::new(IN_FLIGHT));
    let tasks = TaskTracker::new();
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("redirect port: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            continue;
        };
        let service = hyper::service::service_fn(move |request: Request<Incoming>| async move {
            Ok::<_, std::convert::Infallible>(redirect(&request, https_port))
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEAD_WITHIN)
            .keep_alive(false)
            .serve_connection(TokioIo::new(tcp), service);
        tasks.spawn(async move {
            let _permit = permit;
            let _ = tokio::time::timeout(2 * HEAD_WITHIN, connection).await;
        });
    }
    tasks.close();
}

/// The redirect for `request`: its host (from `Host`) and path, over
/// `https://` on `https_port`.
fn redirect<B>(request: &Request<B>, https_port: u16) -> Response<Body> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_without_port)
        .filter(|h| !h.is_empty());
    let Some(host) = host else {
        return answer(
            StatusCode::BAD_REQUEST,
            "a request to the redirect port needs a Host header\n",
        );
    };
    let port = match https_port {
        443 => String::new(),
        port => format!(":{port}"),
    };
    let path = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let location = format!("https://{host}{port}{path}");
    let Ok(location) = HeaderValue::from_str(&location) else {
        return answer(
            StatusCode::BAD_REQUEST,
            "the Host header is not a host name\n",
        );
    };
    let mut response = answer(
        StatusCode::PERMANENT_REDIRECT,
        "this server speaks https://\n",
    );
    response.headers_mut().insert(header::LOCATION, location);
    response
}

fn answer(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// `host` of `host:port` (`[::1]` of `[::1]:80`).
fn host_without_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.split(':').next().unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(host: Option<&str>, uri: &str, port: u16) -> (StatusCode, Option<String>) {
        let mut request = Request::get(uri);
        if let Some(host) = host {
            request = request.header(header::HOST, host);
        }
        let response = redirect(&request.body(()).unwrap(), port);
        let location = response
            .headers()
            .get(header::LOCATION)
            .map(|l| l.to_str().unwrap().to_string());
        (response.status(), location)
    }

    #[test]
    fn the_redirect_keeps_host_and_path_on_the_tls_port() {
        assert_eq!(
            location(Some("grundy.example:80"), "/api/rooms?x=1", 443),
            (
                StatusCode::PERMANENT_REDIRECT,
                Some("https://grundy.example/api/rooms?x=1".into())
            )
        );
        assert_eq!(
            location(Some("[::1]:8080"), "/", 8443).1.as_deref(),
            Some("https://[::1]:8443/")
        );
        assert_eq!(location(None, "/", 443).0, StatusCode::BAD_REQUEST);
    }
}
