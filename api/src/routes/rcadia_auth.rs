//! `POST /api/v1/auth/session {username, password}` -> `{token}`: a person's JWT (the browser
//! bridge hosts with it; agents may play with it). The same people, passwords and burst
//! limits as the `/account` sign-in (`horst_identity::people`); the JWT ends when the person's
//! credentials change (password, block, deletion). `DELETE /api/v1/auth/session` with the JWT
//! as the bearer ends that one JWT at once (the bridge's sign-out), however long it had left.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use axum::Router;
use serde::{Deserialize, Serialize};

use crate::extract::{bearer, same_origin, ClientAddr, Expected, Json};
use crate::{ApiCode, ApiError, AppState};

pub fn router() -> Router<AppState> {
    Router::new().route("/api/v1/auth/session", post(sign_in).delete(sign_out))
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignedOut {
    signed_out: bool,
}

/// Ends the JWT sent as the bearer (a copy of it, say on a shared machine, stops working);
/// the person's other JWTs and sessions stay. A JWT lives 7 days otherwise. Only a JWT that
/// still works can be signed out, once: a second sign-out is a 401 and moves nothing.
async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<SignedOut>, ApiError> {
    let token = bearer(&headers).ok_or_else(|| {
        ApiError::new(
            ApiCode::Unauthorized,
            "send Authorization: Bearer <the session JWT to sign out>",
        )
    })?;
    if !state.auth.revoke_jwt(token).await? {
        return Err(ApiError::new(
            ApiCode::Unauthorized,
            "this is not a session JWT that works: expired, signed out already, ended by a password change or a block, or not one from POST /api/v1/auth/session; agent tokens are ended with `horst admin token revoke`",
        ));
    }
    Ok(Json(SignedOut { signed_out: true }))
}
