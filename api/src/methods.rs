//! Methods a route does not take, answered in the API's JSON error shape.
//!
//! axum answers a known path with an unknown method 405 with an empty body, and sends HEAD
//! to a route's GET handler. Under `/api/` a GET can change state (a host's
//! `pending-actions` delivers what it answers, a reserved seat's `state` marks it ready), so
//! a HEAD there would apply it and throw the answer away: the API takes no HEAD.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::ServiceExt;

use crate::{ApiCode, ApiError};

/// Marks a request that came as HEAD and is routed as [`HEAD_PROBE`] (the request log names
/// it HEAD).
#[derive(Clone, Copy, Debug)]
pub struct AskedHead;

/// The method a HEAD under `/api/` is routed with: no route takes it, so the router answers
/// what it would answer any method the route does not take (its 405 and `Allow`, a
/// transport's own 405, or the 404 of an unknown path) and no handler's work runs.
const HEAD_PROBE: &[u8] = b"HEAD-PROBE";

/// The fallback for a known path asked with a method it does not take (axum adds `Allow`).
pub async fn not_allowed(method: Method, uri: Uri) -> Response {
    let path = uri.path();
    // The guide of the path's own readers: an operator at the admin API was sent to the
    // agents' guides.
    let docs = if path.starts_with("/api/admin/") || path.starts_with("/api/account/") {
        " (docs/operators.md)"
    } else if path.starts_with("/api/v1/agent/bridge/") {
        " (docs/hosts.md)"
    } else if path.starts_with("/api/v1/") {
        " (docs/agents-play.md)"
    } else if path.starts_with("/api/") {
        " (docs/agents-play.md, docs/agents.md)"
    } else {
        ""
    };
    // A probed HEAD's body is never sent; its words name what was asked all the same.
    let method = if method.as_str().as_bytes() == HEAD_PROBE {
        "HEAD"
    } else {
        method.as_str()
    };
    ApiError::new(
        ApiCode::Method,
        format!("{path} does not take {method}; the Allow header lists what it takes{docs}"),
    )
    .into_response()
}

/// Routes HEAD under `/api/` as a method no route takes, and keeps HEAD out of the API's
/// `Allow` headers (axum lists it beside every GET). Run by the server before `router`
/// (`Served`), not as a layer.
pub(crate) async fn no_head_on_the_api(mut request: Request, router: Router) -> Response {
    if !request.uri().path().starts_with("/api/") {
        return route(router, request).await;
    }
    if request.method() == Method::HEAD {
        if let Ok(probe) = Method::from_bytes(HEAD_PROBE) {
            *request.method_mut() = probe;
            request.extensions_mut().insert(AskedHead);
        }
    }
    let mut response = route(router, request).await;
    if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        without_head(&mut response);
    }
    response
}

/// `router`'s answer to `request`.
pub(crate) async fn route(router: Router, request: Request) -> Response {
    match router.oneshot(request).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// `Allow` without HEAD: `GET,HEAD` becomes `GET`.
fn without_head(response: &mut Response) {
    let Some(allow) = response
        .headers()
        .get(header::ALLOW)
        .and_then(|v| v.to_str().ok())
    else {
        return;
    };
    let kept: Vec<&str> = allow
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty() && !m.eq_ignore_ascii_case("HEAD"))
        .collect();
    if let Ok(v) = HeaderValue::from_str(&kept.join(",")) {
        response.headers_mut().insert(header::ALLOW, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_allow(allow: &str) -> Response {
        let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_str(allow).unwrap());
        r
    }

    #[test]
    fn head_leaves_the_allow_header() {
        for (given, kept) in [
            ("GET,HEAD", "GET"),
            ("HEAD,GET,POST", "GET,POST"),
            ("GET, HEAD", "GET"),
            ("POST", "POST"),
        ] {
            let mut r = with_allow(given);
            without_head(&mut r);
            assert_eq!(r.headers()[header::ALLOW], kept, "{given}");
        }
    }

    #[test]
    fn the_probe_is_a_valid_method_nobody_routes() {
        let probe = Method::from_bytes(HEAD_PROBE).unwrap();
        assert_ne!(probe, Method::HEAD);
        assert_ne!(probe, Method::GET);
    }
}
