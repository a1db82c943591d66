//! `POST /api/v1/auth/session {username, password}` -> `{token}`: a signed-in user's JWT (the
//! browser bridge hosts with it; agents may play with it).

use axum::extract::State;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

use crate::extract::Json;
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/auth/session", post(sign_in))
}

async fn sign_in(
    State(state): State<AppState>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, ApiError> {
    let (Some(username), Some(password)) = (
        body.get("username").and_then(Value::as_str),
        body.get("password").and_then(Value::as_str),
    ) else {
        return Err(ApiError::new(
            ApiCode::BadRequest,
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
        None => Err(ApiError::new(
            ApiCode::InvalidCredentials,
            "wrong username or password; an operator creates users with `horst admin user create`",
        )),
    }
}
