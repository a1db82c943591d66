//! Methods a route does not take, answered in the API's JSON error shape.
//!
//! axum answers a known path with an unknown method 405 with an empty body, and sends HEAD
//! to a route's GET handler. Under `/api/` a GET can change state (a host's
//! `pending-actions` delivers what it answers, a reserved seat's `state` marks it ready), so
//! a HEAD there would apply it and throw the answer away: the API takes no HEAD.

use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::{ApiCode, ApiError};

/// The fallback for a known path asked with a method it does not take (axum adds `Allow`).
pub async fn not_allowed(method: Method, uri: Uri) -> Response {
    if !uri.path().starts_with("/api/") {
        return (
            axum::http::StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed\n",
        )
            .into_response();
    }
    ApiError::new(
        ApiCode::Method,
        format!(
            "{} does not take {method}; the Allow header lists what it takes (docs/agents-play.md, docs/agents.md)",
            uri.path()
        ),
    )
    .into_response()
}

/// Refuses HEAD under `/api/` before any handler runs.
pub async fn no_head_on_the_api(request: Request, next: Next) -> Response {
    if request.method() == Method::HEAD && request.uri().path().starts_with("/api/") {
        let mut r = ApiError::new(
            ApiCode::Method,
            "the API takes no HEAD (a GET here may change state); send GET",
        )
        .into_response();
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET"));
        return r;
    }
    next.run(request).await
}
