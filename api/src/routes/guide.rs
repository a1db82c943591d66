//! `GET /agents.html`: the public agent guide (`docs/agents.md`) rendered as HTML with
//! pulldown-cmark, in the game's header and colors. The guide is our own text; raw HTML in it
//! is shown as text anyway, so the page never runs or embeds anything. No user data ever
//! reaches this page.

use std::sync::OnceLock;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use pulldown_cmark::{html, Event, Options, Parser};

use crate::AppState;

const GUIDE: &str = include_str!("../../../docs/agents.md");

pub fn router() -> Router<AppState> {
    Router::new().route("/agents.html", get(page))
}

/// The Markdown as an HTML fragment: tables and strikethrough on, raw HTML turned into text.
fn render(markdown: &str) -> String {
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        e => e,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, parser);
    out
}

/// The game's colors. Code blocks and tables wrap instead of scrolling sideways: a region
/// that scrolls would need keyboard focus (axe's scrollable-region-focusable).
const STYLE: &str = "\
body{margin:0;font:16px/1.55 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif;color:#17202c;background:#eef3f8}\
header{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:12px;background:#1c2738;color:#fff;padding:8px 16px}\
header p{margin:0;font-weight:700;font-size:1.15rem}header a{color:#fff;text-decoration:none}\
header nav a{margin-left:14px;padding:4px 2px}header nav a:first-child{margin-left:0}\
main{max-width:52rem;margin:0 auto;padding:12px 16px 48px;overflow-wrap:anywhere}\
a{color:#164aa8}a:focus-visible{outline:3px solid #ffb300;outline-offset:2px}\
code{font:0.9em ui-monospace,Menlo,Consolas,monospace;background:#e1e8f0;border-radius:4px;padding:0 3px}\
pre{background:#1c2738;color:#f4f6f9;padding:12px 14px;border-radius:8px;white-space:pre-wrap;overflow-wrap:anywhere}\
pre code{background:none;padding:0;color:inherit}\
table{border-collapse:collapse}th,td{border:1px solid #c5d0dc;padding:4px 8px;text-align:left}\
h1{font-size:1.7rem}h2{margin-top:2rem;border-bottom:2px solid #c5d0dc}";

fn html() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Game con Vogel: guide for agents</title><style>{STYLE}</style></head>\
             <body><header><p><a href=\"/\">Game con Vogel</a></p>\
             <nav aria-label=\"Seiten\"><a href=\"/\">Spiel</a> <a href=\"/board.html\">Brett</a> \
             <a href=\"/agents.html\" aria-current=\"page\">Anleitung</a> <a href=\"/account/\">Konto</a></nav></header>\
             <main>{}</main></body></html>\n",
            render(GUIDE)
        )
    })
}

async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
            ),
        ],
        html(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn markdown_becomes_html_and_raw_html_stays_text() {
        let out = super::render("# Title\n\n`code` and <script>alert(1)</script>\n\n- a\n- b\n");
        assert!(out.contains("<h1>Title</h1>"), "{out}");
        assert!(out.contains("<code>code</code>"), "{out}");
        assert!(out.contains("<li>a</li>"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("<script>"), "{out}");
    }

    #[test]
    fn the_guide_renders() {
        let page = super::html();
        assert!(page.contains("<h2>"), "no sections");
        assert!(page.contains("<code>idempotencyKey</code>"));
        assert!(!page.contains("\n# "), "Markdown headings left raw");
    }
}
