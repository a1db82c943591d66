//! Security headers on every response (`router()` wraps every route in the request log,
//! which adds them: [`Asked`], taken from the request before it is handed on, then
//! [`Asked::answer`] on the response): every
//! answer is `nosniff`, every `/api/` answer without a cache rule of its own is `no-store`,
//! and every HTML answer gets a Content-Security-Policy, a referrer
//! policy and a framing rule, unless its route set a stricter policy of its own (`/account`,
//! `/admin`). Answers served over TLS (`extract::over_tls`) carry HSTS, so a browser that
//! once came over https never goes to this host over plain http again (where a cookie could
//! be planted or a page swapped).
//!
//! The baseline CSP is the union of what the pages need (their own scripts and the engine's
//! WebAssembly, inline styles, frames for the bridge's games); each page narrows it further
//! with its own `<meta>` policy, and a browser enforces both. `frame-ancestors` (which a
//! `<meta>` policy cannot set) is `'none'`, except for the pages meant to be framed, the
//! house games under `/games/...`, framed by the bridge and the house table page of this
//! origin (`'self'`); their 404 page is shown in that frame and gets the same rule.
//!
//! Nothing is meant to be framed by other sites: the MCP App (`ui://gcv/player`) reaches an
//! MCP host as the text of `resources/read`, which the host puts in a frame of its own, and
//! horst serves no page under `/mcp-app/` (every answer there is the 404 page, which allowed
//! any site to frame it while the path had a `*` rule of its own).

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::response::Response;

/// The baseline policy of HTML answers, without `frame-ancestors`.
const BASELINE: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-src 'self' https: http:; object-src 'none'; base-uri 'none'; form-action 'self'";

/// Who may frame the page at `path`.
pub fn frame_ancestors(path: &str) -> &'static str {
    if path.starts_with("/games/") {
        "'self'"
    } else {
        "'none'"
    }
}

/// The CSP an HTML answer at `path` gets when its route set none.
pub fn policy(path: &str) -> String {
    policy_framed_by(frame_ancestors(path))
}

fn policy_framed_by(frame_ancestors: &str) -> String {
    format!("{BASELINE}; frame-ancestors {frame_ancestors}")
}

/// Whether the answer is HTML, by its `Content-Type` (compared without a lowercased copy:
/// every answer is asked).
fn is_html(r: &Response) -> bool {
    r.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().get(..9))
        .is_some_and(|v| v.eq_ignore_ascii_case("text/html"))
}

/// A year: browsers keep using https for this long after an answer with it.
const HSTS: &str = "max-age=31536000";

/// What the request decides about its answer's headers: taken before the request is handed
/// on (the path itself is not copied: this runs for every request).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Asked {
    api: bool,
    frame: &'static str,
    tls: bool,
}

impl Asked {
    pub(crate) fn of(state: &crate::AppState, req: &Request) -> Asked {
        let path = req.uri().path();
        Asked {
            api: path.starts_with("/api/"),
            frame: frame_ancestors(path),
            tls: crate::extract::over_tls(state, req.headers()),
        }
    }

    /// Adds what the response lacks, never replaces a route's own header.
    pub(crate) fn answer(self, r: &mut Response) {
        let Asked { api, frame, tls } = self;
        let html = is_html(r);
        let h = r.headers_mut();
        if tls {
            h.entry(header::STRICT_TRANSPORT_SECURITY)
                .or_insert(HeaderValue::from_static(HSTS));
        }
        h.entry(header::X_CONTENT_TYPE_OPTIONS)
            .or_insert(HeaderValue::from_static("nosniff"));
        // API answers are about now, and some carry a secret once (a new key, token or JWT): no
        // cache keeps one unless its route says otherwise (errors included).
        if api {
            h.entry(header::CACHE_CONTROL)
                .or_insert(HeaderValue::from_static("no-store"));
        }
        if html {
            if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
                if let Ok(v) = HeaderValue::from_str(&policy_framed_by(frame)) {
                    h.insert(header::CONTENT_SECURITY_POLICY, v);
                }
            }
            h.entry(header::REFERRER_POLICY)
                .or_insert(HeaderValue::from_static("same-origin"));
            if frame == "'none'" {
                h.entry(header::X_FRAME_OPTIONS)
                    .or_insert(HeaderValue::from_static("DENY"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pages_meant_to_be_framed_may_be() {
        assert!(policy("/").ends_with("frame-ancestors 'none'"));
        assert!(policy("/bridge/").ends_with("frame-ancestors 'none'"));
        assert!(policy("/games/chess/index.html").ends_with("frame-ancestors 'self'"));
        // The MCP App is no page of this server: its path is framed like any other.
        assert!(policy("/mcp-app/player.html").ends_with("frame-ancestors 'none'"));
        // A path that only starts like one is not one.
        assert!(policy("/games").ends_with("frame-ancestors 'none'"));
    }

    #[test]
    fn an_answer_is_html_by_its_content_type_in_any_case() {
        let with = |ct: &str| {
            let mut r = Response::new(axum::body::Body::empty());
            if let Ok(v) = HeaderValue::from_str(ct) {
                r.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            is_html(&r)
        };
        assert!(with("text/html"));
        assert!(with("text/html; charset=utf-8"));
        assert!(with("  Text/HTML;charset=utf-8"));
        assert!(!with("application/json"));
        assert!(!with("text/htm"));
        assert!(!with("text/plain"));
        assert!(!with(""));
        assert!(!is_html(&Response::new(axum::body::Body::empty())));
    }
}
