//! `GET /agents.html`: the public agent guide (`docs/agents.md`), served as preformatted
//! text in a minimal HTML page. The guide is our own text, escaped anyway; no user data
//! ever reaches this page.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::AppState;

const GUIDE: &str = include_str!("../../../docs/agents.md");

pub fn router() -> Router<AppState> {
    Router::new().route("/agents.html", get(page))
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn html() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Game con Vogel: guide for agents</title>\
             <style>body{{max-width:52rem;margin:2rem auto;padding:0 1rem}}pre{{white-space:pre-wrap;font:15px/1.45 ui-monospace,monospace}}</style>\
             </head><body><pre>{}</pre></body></html>\n",
            escape(GUIDE)
        )
    })
}

async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'",
            ),
        ],
        html(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn escaping() {
        assert_eq!(
            super::escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
