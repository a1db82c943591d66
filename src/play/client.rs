//! The HTTP calls of `horst play`: the agent API of protocol section 5, with the bearer
//! token (never printed: [`Token`]'s `Debug` is redacted, and no URL carries it).

use std::time::{Duration, SystemTime};

use horst_house::answer::{self, BodyError};
use serde_json::Value;

/// The agent token. Its `Debug` hides it, so no `{:?}` can print it.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    pub fn new(t: &str) -> Token {
        Token(t.trim().to_string())
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

impl std::str::FromStr for Token {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Token, Self::Err> {
        Ok(Token::new(s))
    }
}

/// One HTTP answer: status and JSON body (`Null` when the body is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    /// The wait the server's `Retry-After` asked for, as seconds or an HTTP date
    /// (`horst_house::answer::retry_after`).
    pub retry_after: Option<Duration>,
    /// Where a redirect pointed (`Location`); redirects are never followed.
    pub location: Option<String>,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// `code` of an error body.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    /// `error` of an error body, else the status.
    pub fn message(&self) -> String {
        match (self.body["error"].as_str(), &self.location) {
            (Some(e), _) => e.to_string(),
            (None, Some(to)) => {
                format!("a redirect to {to}; give --backend the address horst itself serves on")
            }
            (None, None) => format!("HTTP {}", self.status),
        }
    }

    /// The status and, when the body says more, its `error`: "HTTP 429 slow down", "HTTP 502".
    pub fn status_line(&self) -> String {
        let m = self.message();
        let bare = format!("HTTP {}", self.status);
        if m == bare {
            bare
        } else {
            format!("{bare} {m}")
        }
    }

    /// The body as the type the protocol says `what` answers; a body of another shape says
    /// which call and why (a backend that speaks another protocol version, say).
    pub fn parse<T: serde::de::DeserializeOwned>(&self, what: &str) -> Result<T, String> {
        T::deserialize(&self.body).map_err(|e| {
            // serde quotes the value it could not take: a line, not megabytes of it.
            let mut why = e.to_string();
            if let Some((cut, _)) = why.char_indices().nth(MAX_ERROR_CHARS) {
                why.truncate(cut);
                why.push_str("...");
            }
            format!(
                "{what} answered HTTP {} with a body horst play cannot read: {why}",
                self.status
            )
        })
    }

    /// A failure worth retrying: 5xx (the proxy's 502/503/504 too) and 429 (the protocol's
    /// "slow down", with `Retry-After`; it ended the run as a lost session).
    pub fn transient(&self) -> bool {
        // A seek that found no table is an answer (the caller decides whether to seek again).
        (self.status >= 500 || self.status == 429) && self.code() != "no_table"
    }
}

const BASE: &str = "/api/v1/agent/sessions";

/// Longest reason printed for a body of the wrong shape, in characters.
const MAX_ERROR_CHARS: usize = 300;

pub struct Client {
    http: reqwest::Client,
    backend: String,
    token: Token,
}

impl Client {
    pub fn new(backend: &str, token: Token) -> Result<Client, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // Long-polls hold 25 s; leave room for a slow network.
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("horst-play/", env!("CARGO_PKG_VERSION")))
            // horst never redirects its API. Followed, a redirect turned a POST into a GET of
            // its target; not followed, it is an answer that names where it pointed.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Client {
            http,
            backend: backend.trim_end_matches('/').to_string(),
            token,
        })
    }

    pub fn backend(&self) -> &str {
        &self.backend
    }

    async fn send(&self, req: reqwest::RequestBuilder, auth: bool) -> Result<Answer, String> {
        let req = if auth {
            req.bearer_auth(&self.token.0)
        } else {
            req
        };
        let mut r = req.send().await.map_err(describe)?;
        let status = r.status().as_u16();
        let retry_after = answer::retry_after(r.headers(), SystemTime::now());
        let location = r
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .filter(|_| (300..400).contains(&status));
        // Up to 16 MiB and no further: a server (or something posing as one) sending without
        // end must not fill memory. Too large, or cut off, is a failed call, retried.
        let bytes = answer::read_bounded(&mut r).await.map_err(|e| match e {
            BodyError::Read(e) => describe(e),
            too_large => too_large.to_string(),
        })?;
        Ok(Answer {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            retry_after,
            location,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{BASE}{path}", self.backend)
    }

    /// `GET /available?game=G` (public); `all` adds active and reserved sessions.
    pub async fn available(&self, game: &str, all: bool) -> Result<Answer, String> {
        let mut q = vec![("game", game)];
        if all {
            q.push(("all", "1"));
        }
        self.send(self.http.get(self.url("/available")).query(&q), false)
            .await
    }

    /// `GET /available` without a filter (the games that have tables now).
    pub async fn available_any(&self) -> Result<Answer, String> {
        self.send(
            self.http.get(self.url("/available")).query(&[("all", "1")]),
            false,
        )
        .await
    }

    /// Checks the token before anything else: the state of a session that cannot exist
    /// answers 401/403 for a bad token and 404/410 for a good one.
    pub async fn check_token(&self) -> Result<Answer, String> {
        self.send(
            self.http.get(self.url("/ses_000000000000/state?wait=0")),
            true,
        )
        .await
    }

    /// `POST /seek`: a seat at the best open table of `game`, waiting up to `wait` s.
    pub async fn seek(
        &self,
        game: &str,
        as_name: Option<&str>,
        wait: u64,
    ) -> Result<Answer, String> {
        let body = SeekBody {
            game,
            as_name,
            wait,
        };
        self.send(self.http.post(self.url("/seek")).json(&body), true)
            .await
    }

    pub async fn join(&self, id: &str, as_name: Option<&str>) -> Result<Answer, String> {
        let body = match as_name {
            Some(n) => serde_json::json!({ "asName": n }),
            None => serde_json::json!({}),
        };
        self.send(
            self.http.post(self.url(&format!("/{id}/join"))).json(&body),
            true,
        )
        .await
    }

    pub async fn state(&self, id: &str, since: Option<u64>, wait: u64) -> Result<Answer, String> {
        let mut url = format!("/{id}/state?wait={wait}");
        if let Some(v) = since {
            url.push_str(&format!("&since={v}"));
        }
        self.send(self.http.get(self.url(&url)), true).await
    }

    /// `POST /action`; `key` is the `idempotencyKey`: fresh for each new action, the same
    /// on every retry of it, so a retry whose first answer was lost is that action again.
    pub async fn action(
        &self,
        id: &str,
        action: &Value,
        turn: u64,
        key: &str,
    ) -> Result<Answer, String> {
        let body = serde_json::json!({ "action": action, "turn": turn, "idempotencyKey": key });
        self.send(
            self.http
                .post(self.url(&format!("/{id}/action")))
                .json(&body),
            true,
        )
        .await
    }

    pub async fn leave(&self, id: &str) -> Result<Answer, String> {
        self.send(
            self.http
                .post(self.url(&format!("/{id}/leave")))
                .json(&serde_json::json!({})),
            true,
        )
        .await
    }
}

/// A reqwest error in a few words (with its cause: "connection refused", ...).
fn describe(e: reqwest::Error) -> String {
    use std::error::Error;
    let mut s = if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "cannot connect".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = e.source();
    while let Some(c) = src {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        src = c.source();
    }
    s
}

/// The body of `POST /seek`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct SeekBody<'a> {
    game: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    as_name: Option<&'a str>,
    wait: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body of the wrong shape is named in a line: serde quoted all of it (20 MiB of a
    /// string in one error line, measured through a proxy).
    #[test]
    fn a_body_of_the_wrong_shape_is_quoted_in_a_line() {
        let a = Answer {
            status: 200,
            body: Value::String("x".repeat(100_000)),
            retry_after: None,
            location: None,
        };
        let err = a
            .parse::<horst_sessions::wire::AgentSnapshot>("GET /state")
            .unwrap_err();
        assert!(err.len() < 500, "{} characters", err.len());
        assert!(err.starts_with("GET /state answered HTTP 200 with a body horst play cannot read: invalid type: string"), "{err}");
        assert!(err.ends_with("..."), "{err}");
    }
}
