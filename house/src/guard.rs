//! Which requests a house page may make: only to the backend's own origin, and only the
//! files the house serves (the house page, the SDK and the games). The agent token never
//! enters the browser, and with this filter a game cannot reach anything else either: no
//! other host, no other port, no API path with someone else's cookies.

/// The backend origin as the browser spells it: `http://127.0.0.1:8080` (no trailing slash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin(String);

impl Origin {
    /// From the configured backend URL (`http://HOST:PORT`, an optional trailing `/`).
    /// Only plain http and https with an explicit host; no user info, path, query or fragment.
    pub fn parse(url: &str) -> Result<Origin, String> {
        let hint = "expected http://HOST:PORT (for example http://127.0.0.1:8080)";
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| format!("`{url}` is not a URL; {hint}"))?;
        if scheme != "http" && scheme != "https" {
            return Err(format!(
                "`{url}`: only http and https are supported; {hint}"
            ));
        }
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.is_empty()
            || authority.contains(['/', '?', '#', '@', ' '])
            || authority.chars().any(|c| c.is_control())
        {
            return Err(format!(
                "`{url}` must be only a scheme, a host and a port; {hint}"
            ));
        }
        // The browser leaves a scheme's default port out of its URLs (`http://h:80/x` is
        // `http://h/x`), so the origin is compared without it too.
        let authority = authority.to_ascii_lowercase();
        let default_port = if scheme == "http" { ":80" } else { ":443" };
        let authority = match authority.strip_suffix(default_port) {
            Some(host) if !host.is_empty() && !host.ends_with(':') => host.to_string(),
            _ => authority,
        };
        Ok(Origin(format!("{scheme}://{authority}")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The host part without the port (for the browser's host-resolver rule).
    pub fn host(&self) -> &str {
        let authority = self.0.split_once("://").map(|(_, a)| a).unwrap_or(&self.0);
        if authority.starts_with('[') {
            return authority
                .split_once(']')
                .map(|(h, _)| &h[1..])
                .unwrap_or(authority);
        }
        authority
            .rsplit_once(':')
            .map(|(h, _)| h)
            .unwrap_or(authority)
    }
}

/// Paths below the origin a house page may load (its page, the bridge page's modules it
/// shares, the SDK, the games and the pages' shared stylesheet, which the games link). The bridge API is not among them: the page
/// talks to it only through the house process, which adds the token.
const ALLOWED_PREFIXES: &[&str] = &["/house/", "/bridge/", "/sdk/", "/games/", "/pages/"];

/// Whether the browser may fetch `url`. `about:`, `data:` and `blob:` URLs never reach the
/// network and are allowed; everything else must be on the backend origin below an allowed
/// prefix, compared on the exact origin (so `http://127.0.0.1:80800` or
/// `http://127.0.0.1:8080.evil` do not match `http://127.0.0.1:8080`).
pub fn allowed(url: &str, origin: &Origin) -> bool {
    if url.starts_with("about:") || url.starts_with("data:") || url.starts_with("blob:") {
        return true;
    }
    let n = origin.as_str().len();
    let (Some(head), Some(rest)) = (url.get(..n), url.get(n..)) else {
        return false;
    };
    if !head.eq_ignore_ascii_case(origin.as_str()) {
        return false;
    }
    if !rest.starts_with('/') {
        return false;
    }
    let path = rest.split(['?', '#']).next().unwrap_or("");
    // The browser normalises dot segments before requesting; refuse any that remain, and
    // encoded slashes or dots that a server might decode.
    if path.split('/').any(|seg| seg == ".." || seg == ".") || path.contains('%') {
        return false;
    }
    ALLOWED_PREFIXES.iter().any(|p| path.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o() -> Origin {
        Origin::parse("http://127.0.0.1:8080").unwrap()
    }

    #[test]
    fn origin_parsing() {
        assert_eq!(o().as_str(), "http://127.0.0.1:8080");
        assert_eq!(Origin::parse("http://127.0.0.1:8080/").unwrap(), o());
        assert_eq!(o().host(), "127.0.0.1");
        assert_eq!(Origin::parse("http://[::1]:9/").unwrap().host(), "::1");
        assert_eq!(
            Origin::parse("https://Example.org").unwrap().host(),
            "example.org"
        );
        // A scheme's default port is left out, as the browser leaves it out of its URLs.
        let plain = Origin::parse("http://127.0.0.1:80").unwrap();
        assert_eq!(plain.as_str(), "http://127.0.0.1");
        assert!(allowed("http://127.0.0.1/house/table.html", &plain));
        assert_eq!(
            Origin::parse("https://Example.org:443/").unwrap().as_str(),
            "https://example.org"
        );
        assert_eq!(
            Origin::parse("http://[::1]:80").unwrap().as_str(),
            "http://[::1]"
        );
        assert_eq!(
            Origin::parse("http://h:8080").unwrap().as_str(),
            "http://h:8080"
        );
        assert_eq!(
            Origin::parse("https://h:80").unwrap().as_str(),
            "https://h:80"
        );
        for bad in [
            "127.0.0.1:8080",
            "ftp://x",
            "http://",
            "http://a/b",
            "http://u@h:1",
            "http://h:1?x",
        ] {
            assert!(Origin::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn only_the_house_files_on_the_backend_origin() {
        let o = o();
        for ok in [
            "http://127.0.0.1:8080/house/?game=/games/chess/",
            "http://127.0.0.1:8080/games/chess/game.js",
            "http://127.0.0.1:8080/games/vendor/chess.js",
            "http://127.0.0.1:8080/sdk/rcadia-agent.js",
            "http://127.0.0.1:8080/pages/rcadia.css",
            "about:blank",
            "data:,",
        ] {
            assert!(allowed(ok, &o), "{ok} should be allowed");
        }
        for bad in [
            "http://127.0.0.1:8081/games/chess/",
            "http://127.0.0.1:80800/games/chess/",
            "http://127.0.0.1:8080.evil.org/games/",
            "http://127.0.0.1:8080@evil.org/games/",
            "https://127.0.0.1:8080/games/chess/",
            "http://10.0.0.1/games/chess/",
            "http://127.0.0.1:8080/api/v1/agent/bridge/sessions",
            "http://127.0.0.1:8080/api/admin/overview",
            "http://127.0.0.1:8080/metrics",
            "http://127.0.0.1:8080/games/../api/admin",
            "http://127.0.0.1:8080/games/%2e%2e/api",
            "http://127.0.0.1:8080",
            "ws://127.0.0.1:8080/games/",
            "",
        ] {
            assert!(!allowed(bad, &o), "{bad} should be refused");
        }
    }
}
