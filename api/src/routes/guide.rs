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
    Router::new()
        .route("/agents.html", get(page))
        .route("/agents.css", get(style))
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

/// The page's stylesheet (`/agents.css`): a file of its own, so the page's CSP allows styles
/// from 'self' only (no 'unsafe-inline').
const STYLE: &str = include_str!("agents.css");

fn html() -> &'static str {
    static PAGE: OnceLock<String> = OnceLock::new();
    PAGE.get_or_init(|| {
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>Game con Vogel: guide for agents</title><link rel=\"stylesheet\" href=\"/agents.css\"></head>\
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
                "default-src 'none'; style-src 'self'; frame-ancestors 'none'",
            ),
        ],
        html(),
    )
}

async fn style() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
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
