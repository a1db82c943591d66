//! `POST /api/v1/auth/session {username, password}` -> `{token}`: a signed-in user's JWT (the
//! browser bridge hosts with it; agents may play with it).

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::caller::json_body;
use crate::{ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/auth/session", post(sign_in))
}

async fn sign_in(State(state): State<AppState>, body: Bytes) -> Result<Json<Value>, ApiError> {
    let body = json_body(&body)?;
    let (Some(username), Some(password)) = (
        body.get("username").and_then(Value::as_str),
        body.get("password").and_then(Value::as_str),
    ) else {
        return Err(ApiError::client(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "body must be {\"username\": \"...\", \"password\": \"...\"}",
        ));
    };
    match state
        .auth
        .sign_in(username, password)
        .await
        .map_err(ApiError::internal)?
    {
        Some(token) => Ok(Json(json!({ "token": token }))),
        None => Err(ApiError::client(
            StatusCode::UNAUTHORIZED,
            "invalid_credentials",
            "wrong username or password; an operator creates users with `horst admin user create`",
        )),
    }
}
