//! `POST /api/v1/auth/session {username, password}` -> `{token}`: a person's JWT (the browser
//! bridge hosts with it; agents may play with it). The same people, passwords and burst
//! limits as the `/account` sign-in (`horst_identity::people`); the JWT ends when the person's
//! credentials change (password, block, deletion).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use serde::{Deserialize, Serialize};

use crate::extract::{same_origin, ClientAddr, Expected, Json};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/auth/session", post(sign_in))
}

#[derive(Deserialize)]
struct Credentials {
    username: String,
    password: String,
}

impl Expected for Credentials {
    const EXPECTED: &'static str = "{\"username\": \"...\", \"password\": \"...\"}";
}

#[derive(Serialize)]
struct Token {
    token: String,
}

async fn sign_in(
    State(state): State<AppState>,
    ClientAddr(address): ClientAddr,
    headers: HeaderMap,
    Json(body): Json<Credentials>,
) -> Result<Json<Token>, ApiError> {
    // Another site's page could post here without a preflight (a text/plain body) and have
    // each wrong password counted against the person and their own address, locking them
    // out of every sign-in. Programs send no Sec-Fetch-Site or Origin and are not refused.
    same_origin(&headers)?;
    let (person, generation) = super::account::check_password(
        &state,
        address,
        &body.username,
        &body.password,
        "rcadia",
    )
        .await
        .map_err(|e| {
            if e.code() == ApiCode::InvalidCredentials.as_str() {
                ApiError::new(
                    ApiCode::InvalidCredentials,
                    "wrong username or password; an operator creates users with `horst admin user create`",
                )
            } else {
                e
            }
        })?;
    let token = state.auth.issue_jwt(&person.name, generation).await?;
    Ok(Json(Token { token }))
}
