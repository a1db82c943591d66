//! People's game accounts over HTTP: sign-up and sign-in with a session cookie, the
//! Agent-Schlüssel card's API, the operator's `/admin` sign-ins, and the security rules:
//! CSRF (origin and token), session fixation, sessions that end with a block, a password
//! change or a deletion, agent keys that open neither page, sign-in burst limits, clear
//! answers to bad input, and the migration of earlier versions' users.

use serde_json::{json, Value};

use crate::harness::{spawn_app_with, TestApp};

pub const PASSWORD: &str = "bergluft und wolken";
pub const ADMIN_TOKEN: &str = "admin-token-for-tests-0123456789abcdef";

/// A browser's view of the API: the session cookie it holds (name, value) and the CSRF
/// token the page got.
pub struct Visitor {
    pub base: String,
    pub http: reqwest::Client,
    pub cookie: Option<(String, String)>,
    pub csrf: Option<String>,
}

pub struct Reply {
    pub status: u16,
    pub body: Value,
    pub set_cookie: Option<String>,
}

impl Visitor {
    pub fn new(app: &TestApp) -> Visitor {
        Visitor {
            base: format!("http://{}", app.addr),
            http: reqwest::Client::new(),
            cookie: None,
            csrf: None,
        }
    }

    /// A request as the page on this server makes it (same-origin fetch).
    pub async fn send(
        &mut self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Reply {
        self.send_with(method, path, body, &[("sec-fetch-site", "same-origin")])
            .await
    }

    pub async fn send_with(
        &mut self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some((name, value)) = &self.cookie {
            req = req.header("cookie", format!("{name}={value}"));
        }
        if let Some(t) = &self.csrf {
            req = req.header("x-csrf-token", t);
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        let r = req.send().await.expect("request");
        let status = r.status().as_u16();
        let set_cookie = r
            .headers()
            .get("set-cookie")
            .map(|v| v.to_str().unwrap().to_string());
        let text = r.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        if let Some(sc) = &set_cookie {
            let (name, value) = sc
                .split(';')
                .next()
                .and_then(|kv| kv.split_once('='))
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .unwrap_or_default();
            self.cookie = (!value.is_empty()).then_some((name, value));
        }
        if let Some(t) = body.get("csrf").and_then(Value::as_str) {
            self.csrf = Some(t.to_string());
        }
        Reply {
            status,
            body,
            set_cookie,
        }
    }

    pub async fn get(&mut self, path: &str) -> Reply {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&mut self, path: &str, body: Value) -> Reply {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn sign_in(&mut self, name: &str, password: &str) -> Reply {
        self.post(
            "/api/account/sign-in",
            json!({ "name": name, "password": password }),
        )
        .await
    }
}

/// A session JWT of person `name` (password [`PASSWORD`]) from the RCADIA sign-in.
pub async fn rcadia_jwt(app: &TestApp, name: &str) -> String {
    app.http
        .post(app.url("/api/v1/auth/session"))
        .json(&json!({ "username": name, "password": PASSWORD }))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string()
}

pub async fn accounts_app() -> TestApp {
    spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.sign_up = true;
        c.gateway.admin_token = ADMIN_TOKEN.into();
        // The security tests sign in often from one address; the limit has its own test.
        c.gateway.sign_in_per_ip_per_minute = 1000;
        c.gateway.sign_in_per_name_per_minute = 1000;
    })
    .await
}

/// A revoked key's record is kept, so making and revoking keys in a loop grew Redis without
/// bound (about 270 records a second for one signed-in person): 20 keys a day per account.
#[tokio::test]
async fn a_person_makes_at_most_twenty_keys_a_day() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    v.post(
        "/api/account/sign-up",
        json!({ "name": "fuchs", "password": PASSWORD }),
    )
    .await;
    for i in 0..20 {
        let r = v.post("/api/account/keys", json!({})).await;
        assert_eq!(r.status, 201, "key {i}: {}", r.body);
        let prefix = r.body["prefix"].as_str().unwrap().to_string();
        let r = v
            .post(&format!("/api/account/keys/{prefix}/revoke"), json!({}))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let r = v.post("/api/account/keys", json!({})).await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (429, Some("burst")),
        "{}",
        r.body
    );
    assert!(r.body["error"].as_str().unwrap().contains("20 agent keys"));
    // Another person's keys are their own count; the operator still makes keys for anyone.
    app.person("dachs", PASSWORD).await;
    let mut w = Visitor::new(&app);
    assert_eq!(w.sign_in("dachs", PASSWORD).await.status, 200);
    assert_eq!(w.post("/api/account/keys", json!({})).await.status, 201);
    horst_identity::accounts::create_key(&app.store, "fuchs", None)
        .await
        .unwrap();
}

/// A key outlives the session and a password change: a session whose password was given
/// more than five minutes ago (a browser left signed in, a stolen cookie) gives it again
/// before it makes one, as `/admin` asks before it hands out a credential.
#[tokio::test]
async fn a_key_made_long_after_the_sign_in_asks_for_the_password_again() {
    let app = accounts_app().await;
    app.person("fuchs", PASSWORD).await;
    let mut v = Visitor::new(&app);
    assert_eq!(v.sign_in("fuchs", PASSWORD).await.status, 200);
    // Within five minutes of the sign-in: no question.
    assert_eq!(v.post("/api/account/keys", json!({})).await.status, 201);
    app.store.set_clock_offset_ms(6 * 60 * 1000);
    let r = v
        .post("/api/account/keys", json!({ "label": "spät" }))
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (403, Some("reauthenticate")),
        "{}",
        r.body
    );
    assert!(
        r.body["error"].as_str().unwrap().contains("\"password\""),
        "the refusal says how to answer it: {}",
        r.body
    );
    let r = v
        .post(
            "/api/account/keys",
            json!({ "label": "spät", "password": "falsch falsch" }),
        )
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (401, Some("invalid_credentials")),
        "{}",
        r.body
    );
    let keys = v.get("/api/account/keys").await;
    assert_eq!(
        keys.body["items"].as_array().unwrap().len(),
        1,
        "{}",
        keys.body
    );
    let r = v
        .post(
            "/api/account/keys",
            json!({ "label": "spät", "password": PASSWORD }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // The password given counts as a sign-in's for the next five minutes.
    assert_eq!(v.post("/api/account/keys", json!({})).await.status, 201);
    let trail = horst_operator::sign_ins(&app.store, 0, 20).await.unwrap();
    let checks: Vec<_> = trail
        .iter()
        .filter(|e| e.detail["via"] == "key_create")
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(checks.len(), 2, "both checks are in the trail: {trail:?}");
}

#[tokio::test]
async fn sign_up_sign_in_keys_and_quotas() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    let s = v.get("/api/account/session").await;
    assert_eq!(s.body["signedIn"], false);
    assert_eq!(s.body["signUpOpen"], true);

    let r = v
        .post(
            "/api/account/sign-up",
            json!({ "name": "Fuchs", "password": PASSWORD }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["account"]["name"], "fuchs");
    let cookie = r.set_cookie.unwrap();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    // Over TLS (a proxy says so) the cookie is Secure.
    let mut tls = Visitor::new(&app);
    let r = tls
        .send_with(
            reqwest::Method::POST,
            "/api/account/sign-in",
            Some(json!({ "name": "fuchs", "password": PASSWORD })),
            &[("x-forwarded-proto", "https")],
        )
        .await;
    assert!(r.set_cookie.unwrap().contains("Secure"));

    // The key card: create (shown once), list (never the key), at most 5, revoke.
    let r = v
        .post("/api/account/keys", json!({ "label": "Laptop" }))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let key = r.body["key"].as_str().unwrap().to_string();
    let prefix = r.body["prefix"].as_str().unwrap().to_string();
    assert!(key.starts_with(&prefix) && key.starts_with("gcv_"));
    let list = v.get("/api/account/keys").await;
    assert_eq!(list.body["maxActive"], 5);
    // The page's label field reads the label limit here: the same one a key is checked by.
    let max = horst_identity::accounts::MAX_LABEL_CHARS;
    assert_eq!(list.body["maxLabelChars"], max);
    let long = v
        .post("/api/account/keys", json!({ "label": "é".repeat(max + 1) }))
        .await;
    assert_eq!(
        (long.status, long.body["code"].as_str()),
        (400, Some("invalid_input")),
        "{}",
        long.body
    );
    assert_eq!(list.body["items"][0]["label"], "Laptop");
    assert_eq!(list.body["items"][0]["prefix"], prefix.as_str());
    assert!(
        !list.body.to_string().contains(&key),
        "a listing shows a key"
    );

    // The key works over MCP, and it is the person's account.
    let ok = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.body["result"]["isError"], false, "{}", ok.text);
    let used = v.get("/api/account/keys").await;
    assert!(
        used.body["items"][0]["lastUsedAt"].is_string(),
        "{}",
        used.body
    );

    for i in 0..4 {
        let r = v
            .post("/api/account/keys", json!({ "label": format!("k{i}") }))
            .await;
        assert_eq!(r.status, 201);
    }
    let full = v.post("/api/account/keys", json!({})).await;
    assert_eq!(
        (full.status, full.body["code"].as_str()),
        (409, Some("conflict"))
    );
    assert!(full.body["error"]
        .as_str()
        .unwrap()
        .contains("5 active keys"));

    let r = v
        .post(&format!("/api/account/keys/{prefix}/revoke"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let after = app.call("my_submissions", json!({}), Some(&key)).await;
    assert_eq!(after.status, 401);

    // Someone else's key is not theirs to revoke (and not confirmed to exist).
    let other = app.agent_key("anderer", 0).await;
    let mut w = Visitor::new(&app);
    w.post(
        "/api/account/sign-up",
        json!({ "name": "dachs", "password": PASSWORD }),
    )
    .await;
    let r = w
        .post(
            &format!("/api/account/keys/{}/revoke", &other[..12]),
            json!({}),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&other))
            .await
            .status,
        200
    );

    let q = v.get("/api/account/quotas").await;
    assert_eq!(q.status, 200, "{}", q.body);
    assert_eq!(q.body["trust"], 0);
    assert_eq!(q.body["limits"]["playtests"], 6);
    assert_eq!(q.body["remaining"]["submissions"], 2);

    // Sign-out ends the session on the server, not only in the browser.
    let old = v.cookie.clone();
    let r = v.post("/api/account/sign-out", json!({})).await;
    assert_eq!(r.status, 200);
    v.cookie = old;
    assert_eq!(v.get("/api/account/keys").await.status, 401);
}

#[tokio::test]
async fn bad_input_on_every_form_gets_a_clear_message() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    let cases = [
        (json!({ "name": "x", "password": PASSWORD }), "2-32"),
        (
            json!({ "name": "agent-12345678", "password": PASSWORD }),
            "reserved",
        ),
        (json!({ "name": "fuchs", "password": "kurz" }), "at least 8"),
        (
            json!({ "name": "fuchs", "password": "x".repeat(300) }),
            "at most 256",
        ),
        (
            json!({ "name": "fuchsbau1", "password": "FUCHSBAU1" }),
            "not be the account name",
        ),
        (json!({ "name": "fuchs" }), "password"),
        (
            json!({ "name": "fuchs", "password": PASSWORD, "admin": true }),
            "unknown field",
        ),
    ];
    for (body, says) in cases {
        let r = v.post("/api/account/sign-up", body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert_eq!(r.body["code"], "invalid_input", "{body}");
        let msg = r.body["error"].as_str().unwrap();
        assert!(msg.contains(says), "{body}: {msg}");
    }
    let r = v
        .send(
            reqwest::Method::POST,
            "/api/account/sign-in",
            Some(Value::String("{not json".into())),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["error"].as_str().unwrap().contains("{\"name\""),
        "{}",
        r.body
    );
    // A taken name.
    v.post(
        "/api/account/sign-up",
        json!({ "name": "fuchs", "password": PASSWORD }),
    )
    .await;
    let mut w = Visitor::new(&app);
    let r = w
        .post(
            "/api/account/sign-up",
            json!({ "name": "fuchs", "password": PASSWORD }),
        )
        .await;
    assert_eq!((r.status, r.body["code"].as_str()), (409, Some("conflict")));
    // The key form.
    let r = v
        .post("/api/account/keys", json!({ "label": "x".repeat(41) }))
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (400, Some("invalid_input"))
    );
    assert!(r.body["error"].as_str().unwrap().contains("40"));
    let r = v.post("/api/account/keys", json!({ "label": 7 })).await;
    assert_eq!(r.status, 400);
    // The admin sign-in forms.
    let r = v
        .post("/api/admin/session", json!({ "token": ADMIN_TOKEN }))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["error"].as_str().unwrap().contains("your name"),
        "{}",
        r.body
    );
    let r = v
        .post("/api/admin/session", json!({ "name": "fuchs" }))
        .await;
    assert_eq!(r.status, 400);
    // Wrong credentials say so, the same for an unknown name and a wrong password.
    let a = w.sign_in("fuchs", "falsches passwort").await;
    let b = w.sign_in("niemand", "falsches passwort").await;
    assert_eq!((a.status, b.status), (401, 401));
    assert_eq!(a.body, b.body);
    // Closed sign-up.
    horst_operator::set_sign_up(&app.store, "olga", false)
        .await
        .unwrap();
    let r = w
        .post(
            "/api/account/sign-up",
            json!({ "name": "marder", "password": PASSWORD }),
        )
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (403, Some("sign_up_closed"))
    );
}

#[tokio::test]
async fn forms_from_another_origin_and_requests_without_the_token_are_refused() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    v.post(
        "/api/account/sign-up",
        json!({ "name": "fuchs", "password": PASSWORD }),
    )
    .await;
    let host = app.addr.to_string();
    // Another site's page posts with the victim's cookie (as if SameSite did not hold).
    for headers in [
        vec![("sec-fetch-site", "cross-site")],
        vec![("sec-fetch-site", "same-site")],
        vec![("origin", "http://evil.example")],
    ] {
        let r = v
            .send_with(
                reqwest::Method::POST,
                "/api/account/keys",
                Some(json!({})),
                &headers,
            )
            .await;
        assert_eq!(
            (r.status, r.body["code"].as_str()),
            (403, Some("cross_site")),
            "{headers:?}"
        );
        let r = v
            .send_with(
                reqwest::Method::POST,
                "/api/account/sign-in",
                Some(json!({ "name": "fuchs", "password": PASSWORD })),
                &headers,
            )
            .await;
        assert_eq!(r.status, 403, "login CSRF {headers:?}");
    }
    // Same origin but without (or with a wrong) CSRF token.
    let token = v.csrf.take();
    let own_origin = format!("http://{host}");
    let r = v
        .send_with(
            reqwest::Method::POST,
            "/api/account/keys",
            Some(json!({})),
            &[("origin", own_origin.as_str())],
        )
        .await;
    assert_eq!((r.status, r.body["code"].as_str()), (403, Some("csrf")));
    v.csrf = Some("0".repeat(64));
    let r = v.post("/api/account/keys", json!({})).await;
    assert_eq!(r.body["code"], "csrf");
    v.csrf = token;
    let r = v.post("/api/account/keys", json!({})).await;
    assert_eq!(r.status, 201);
    // The admin API takes the same checks on a page session.
    let r = v
        .send_with(
            reqwest::Method::POST,
            "/api/admin/switches/gateway",
            Some(json!({ "mode": "off" })),
            &[("sec-fetch-site", "cross-site")],
        )
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn sign_in_always_makes_a_new_session_and_ends_the_old_one() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    v.post(
        "/api/account/sign-up",
        json!({ "name": "fuchs", "password": PASSWORD }),
    )
    .await;
    let session = |id: &str| Some(("horst_session".to_string(), id.to_string()));
    let first = v.cookie.clone().unwrap().1;
    // An attacker plants a made-up id: it is never promoted to a session.
    v.cookie = session(&"a".repeat(64));
    v.sign_in("fuchs", PASSWORD).await;
    let second = v.cookie.clone().unwrap().1;
    assert_ne!(second, "a".repeat(64));
    // Signing in with a live session gives a new id and ends the old one.
    v.cookie = session(&second);
    v.sign_in("fuchs", PASSWORD).await;
    let third = v.cookie.clone().unwrap().1;
    assert_ne!(third, second);
    for old in [&second] {
        let mut o = Visitor::new(&app);
        o.cookie = session(old);
        o.csrf = v.csrf.clone();
        assert_eq!(o.get("/api/account/keys").await.status, 401, "old id {old}");
    }
    // The first session (another browser) is not ended by these sign-ins.
    let mut f = Visitor::new(&app);
    f.cookie = session(&first);
    assert_eq!(f.get("/api/account/keys").await.status, 200);
    // Redis holds the id's hash, never the id itself.
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    assert!(keys.iter().all(|k| !k.contains(&third)), "{keys:?}");
}

#[tokio::test]
async fn blocked_deleted_and_re_passworded_people_lose_their_sessions() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    v.post(
        "/api/account/sign-up",
        json!({ "name": "fuchs", "password": PASSWORD }),
    )
    .await;
    let key = v.post("/api/account/keys", json!({})).await.body["key"]
        .as_str()
        .unwrap()
        .to_string();
    let jwt = rcadia_jwt(&app, "fuchs").await;
    let bridge = |jwt: String| {
        let http = app.http.clone();
        let url = app.url("/api/v1/agent/bridge/sessions");
        async move {
            http.post(url)
                .bearer_auth(jwt)
                .json(&json!({ "config": {} }))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_ne!(bridge(jwt.clone()).await, 401, "a fresh JWT works");

    // Blocked: the browser session and the JWT end now; the key gets 403.
    horst_operator::set_blocked(&app.store, &app.auth, "olga", "fuchs", true)
        .await
        .unwrap();
    assert_eq!(v.get("/api/account/keys").await.status, 401);
    assert_eq!(v.get("/api/account/session").await.body["signedIn"], false);
    // The JWT's answer says why and what to do: signing in again would only be refused too.
    assert!(
        crate::harness::eventually(std::time::Duration::from_secs(5), async || {
            bridge(jwt.clone()).await == 403
        })
        .await,
        "the JWT of a blocked person still works, or is refused as unknown"
    );
    let old = app
        .http
        .post(app.url("/api/v1/agent/bridge/sessions"))
        .bearer_auth(&jwt)
        .json(&json!({ "config": {} }))
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), 403);
    let old: Value = old.json().await.unwrap();
    assert_eq!(old["code"], "blocked", "{old}");
    let said = old["error"].as_str().unwrap();
    assert!(
        said.contains("blocked") && said.contains("operator") && !said.contains("sign in again"),
        "{said}"
    );
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        403
    );
    let r = v.sign_in("fuchs", PASSWORD).await;
    assert_eq!((r.status, r.body["code"].as_str()), (403, Some("blocked")));
    horst_operator::set_blocked(&app.store, &app.auth, "olga", "fuchs", false)
        .await
        .unwrap();
    // Unblocked, the JWT from before stays ended (the block ended it): sign in again.
    assert_eq!(bridge(jwt.clone()).await, 401);

    // A new password ends every session; the old password no longer works.
    assert_eq!(v.sign_in("fuchs", PASSWORD).await.status, 200);
    horst_operator::set_user_password(
        &app.store,
        &app.auth,
        "olga",
        "fuchs",
        "neues passwort 1",
        false,
    )
    .await
    .unwrap();
    assert_eq!(v.get("/api/account/keys").await.status, 401);
    assert_eq!(v.sign_in("fuchs", PASSWORD).await.status, 401);
    assert_eq!(v.sign_in("fuchs", "neues passwort 1").await.status, 200);

    // Deleted: sessions end, keys are revoked, the name stays taken.
    let d = horst_operator::delete_user(&app.store, &app.auth, "olga", "fuchs")
        .await
        .unwrap();
    assert_eq!(d.keys_revoked.len(), 1);
    assert_eq!(v.get("/api/account/keys").await.status, 401);
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        401
    );
    assert_eq!(v.sign_in("fuchs", "neues passwort 1").await.status, 401);
    let mut w = Visitor::new(&app);
    let r = w
        .post(
            "/api/account/sign-up",
            json!({ "name": "fuchs", "password": PASSWORD }),
        )
        .await;
    // The name stays taken: a stranger cannot sign up as the deleted person (their posts and
    // revisions keep the name); the operator may give the account a password again.
    assert_eq!((r.status, r.body["code"].as_str()), (409, Some("conflict")));
    horst_operator::create_user(&app.store, &app.auth, "olga", "fuchs", PASSWORD, 0)
        .await
        .unwrap();
    assert_eq!(w.sign_in("fuchs", PASSWORD).await.status, 200);
}

#[tokio::test]
async fn agent_keys_open_neither_page() {
    let app = accounts_app().await;
    let key = app.agent_key("fuchs", 2).await;
    let http = &app.http;
    for (method, path) in [
        (reqwest::Method::GET, "/api/account/keys"),
        (reqwest::Method::POST, "/api/account/keys"),
        (reqwest::Method::GET, "/api/account/quotas"),
        (reqwest::Method::GET, "/api/admin/overview"),
        (reqwest::Method::GET, "/api/admin/accounts"),
        (reqwest::Method::POST, "/api/admin/switches/gateway"),
    ] {
        let r = http
            .request(method.clone(), app.url(path))
            .bearer_auth(&key)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {path}");
    }
    let s: Value = http
        .get(app.url("/api/admin/session"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(s["signedIn"], false);
    let r = http
        .post(app.url("/api/admin/session"))
        .json(&json!({ "token": key, "operatorName": "mallory" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn operators_sign_in_on_admin_with_their_role_or_an_admin_token() {
    let app = accounts_app().await;
    app.person("olga", PASSWORD).await;
    app.person("fuchs", PASSWORD).await;
    let mut v = Visitor::new(&app);
    // A person without the role may not.
    let r = v
        .post(
            "/api/admin/session",
            json!({ "name": "fuchs", "password": PASSWORD }),
        )
        .await;
    assert_eq!(
        (r.status, r.body["code"].as_str()),
        (403, Some("forbidden"))
    );
    // Their /account session does not open /admin either (it is not /admin's cookie).
    v.sign_in("fuchs", PASSWORD).await;
    assert_eq!(v.get("/api/admin/overview").await.status, 401);

    horst_operator::set_operator_role(&app.store, "cli", "olga", true)
        .await
        .unwrap();
    let mut o = Visitor::new(&app);
    let r = o
        .post(
            "/api/admin/session",
            json!({ "name": "olga", "password": PASSWORD }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["who"], "page:olga");
    let r = o
        .post("/api/admin/switches/sign-up", json!({ "open": false }))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let log = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(
        (log[0].who.as_str(), log[0].action.as_str()),
        ("page:olga", "sign_up")
    );
    // Taking the role ends the session's /admin access at once.
    horst_operator::set_operator_role(&app.store, "cli", "olga", false)
        .await
        .unwrap();
    assert_eq!(o.get("/api/admin/overview").await.status, 401);

    // An admin token, with the name for the audit trail; retiring it ends the session.
    let mut t = Visitor::new(&app);
    let r = t
        .post(
            "/api/admin/session",
            json!({ "token": "wrong", "operatorName": "Olga K" }),
        )
        .await;
    assert_eq!(r.status, 401);
    let r = t
        .post(
            "/api/admin/session",
            json!({ "token": ADMIN_TOKEN, "operatorName": "Olga K" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(t.get("/api/admin/overview").await.status, 200);
    let config_id = horst_identity::admin_tokens::list(&app.store)
        .await
        .unwrap()[0]
        .id
        .clone();
    let (new_token, _) = horst_operator::create_admin_token(&app.store, "cli", Some("next"))
        .await
        .unwrap();
    horst_operator::retire_admin_token(&app.store, "cli", &config_id)
        .await
        .unwrap();
    assert_eq!(t.get("/api/admin/overview").await.status, 401);
    let bearer = |token: &str| {
        app.http
            .get(app.url("/api/admin/overview"))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(bearer(ADMIN_TOKEN).await.unwrap().status(), 401);
    assert_eq!(bearer(&new_token).await.unwrap().status(), 200);
}

#[tokio::test]
async fn failed_sign_ins_are_limited_per_name_and_address_and_per_address() {
    let app = spawn_app_with(|c| {
        c.gateway.sign_in_per_ip_per_minute = 6;
        c.gateway.sign_in_per_name_per_minute = 3;
    })
    .await;
    app.person("fuchs", PASSWORD).await;
    let mut v = Visitor::new(&app);
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(v.sign_in("fuchs", "falsch falsch").await.status);
    }
    // Three free failures, then the fourth waits (the clock does not move in between: the
    // first wait is a second, and nothing here sleeps).
    assert_eq!(statuses, [401, 401, 401, 429]);
    let limited = v.sign_in("fuchs", PASSWORD).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.body["code"], "burst");
    assert!(limited.body["error"]
        .as_str()
        .unwrap()
        .contains("for this name from your address"));
    // Per address: other names run into the address limit.
    let mut seen = Vec::new();
    for i in 0..8 {
        seen.push(v.sign_in(&format!("name{i}"), "falsch falsch").await);
    }
    let refused = seen
        .iter()
        .find(|r| r.status == 429)
        .expect("an address limit");
    assert!(refused.body["error"]
        .as_str()
        .unwrap()
        .contains("from your address"));
    // The RCADIA sign-in counts the same attempts.
    let r = app
        .http
        .post(app.url("/api/v1/auth/session"))
        .json(&json!({ "username": "fuchs", "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("retry-after").is_some() || r.status() == 200);
}

#[tokio::test]
async fn an_earlier_versions_user_does_not_take_over_an_account_of_that_name() {
    let app = accounts_app().await;
    // An earlier version kept its RCADIA users apart from the operator's accounts: both
    // could hold one name (in any case), as an upgrade finds them.
    horst_identity::accounts::create_account(&app.store, "kurt", 2)
        .await
        .unwrap();
    let key = horst_identity::accounts::create_key(&app.store, "kurt", Some("laptop"))
        .await
        .unwrap();
    app.auth
        .write_legacy_user("Kurt", "altes passwort", 1000)
        .await
        .unwrap();
    let mut v = Visitor::new(&app);
    let r = v.sign_in("Kurt", "altes passwort").await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert!(v.cookie.is_none());
    let r = app
        .http
        .post(app.url("/api/v1/auth/session"))
        .json(&json!({ "username": "kurt", "password": "altes passwort" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    // The account is as it was: no password, its key works; the old record waits.
    let password: Option<String> = redis::cmd("HGET")
        .arg(app.store.key("account:kurt"))
        .arg("password")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    assert_eq!(password, None);
    let auth = format!("Bearer {}", key.key);
    let caller = horst_identity::accounts::authenticate(&app.store, Some(&auth))
        .await
        .unwrap()
        .unwrap();
    assert_eq!((caller.name.as_str(), caller.trust), ("kurt", 2));
    assert!(app.auth.legacy_user_exists("kurt").await.unwrap());
}

#[tokio::test]
async fn earlier_versions_users_move_to_phc_hashes_on_their_next_sign_in() {
    let app = accounts_app().await;
    app.auth
        .write_legacy_user("Alte", "altes passwort", 1000)
        .await
        .unwrap();
    // The name is taken while the old record waits.
    let mut v = Visitor::new(&app);
    let r = v
        .post(
            "/api/account/sign-up",
            json!({ "name": "alte", "password": PASSWORD }),
        )
        .await;
    assert_eq!(r.status, 409);
    // And the operator cannot make an account of that name: the old user's first sign-in
    // would take it over, keys and all.
    let made = horst_identity::accounts::create_account(&app.store, "alte", 2).await;
    assert!(
        matches!(made, Err(horst_identity::IdentityError::Conflict(_))),
        "{made:?}"
    );
    assert_eq!(v.sign_in("Alte", "falsch falsch").await.status, 401);
    let r = v.sign_in("Alte", "altes passwort").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["account"]["name"], "alte");
    let stored: Option<String> = redis::cmd("HGET")
        .arg(app.store.key("account:alte"))
        .arg("password")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    assert!(stored.unwrap().starts_with("$argon2id$v=19$"));
    assert!(!app.auth.legacy_user_exists("Alte").await.unwrap());
    // From now on the PHC hash answers, for /account and RCADIA alike.
    let mut w = Visitor::new(&app);
    assert_eq!(w.sign_in("alte", "altes passwort").await.status, 200);
    let r = app
        .http
        .post(app.url("/api/v1/auth/session"))
        .json(&json!({ "username": "alte", "password": "altes passwort" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Records written by an earlier version (before any process of this one started) are
    // found by the index the first starting process builds.
    let _: () = redis::pipe()
        .del(app.store.key("auth:legacy:indexed"))
        .hset(app.store.key("auth:user:Bert.Old"), "pbkdf2", "1$00$00")
        .hset(app.store.key("auth:user:bert"), "pbkdf2", "1$00$00")
        .query_async(&mut app.store.conn())
        .await
        .unwrap();
    let fresh = horst_identity::auth::Auth::new(app.store.clone(), &app.config.jwt_key_file())
        .await
        .unwrap();
    assert_eq!(
        fresh.legacy_name("BERT").await.unwrap().as_deref(),
        Some("bert")
    );
    assert_eq!(
        fresh.legacy_name("bert.old").await.unwrap().as_deref(),
        Some("Bert.Old")
    );
}

/// An RCADIA token with the play scope, made by operator olga ("Fisch"): (token, agent id).
async fn play_token(app: &TestApp) -> (String, String) {
    horst_operator::create_token(
        &app.store,
        &app.auth,
        "olga",
        &["play".into()],
        Some("Fisch"),
        false,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_revoked_rcadia_token_is_refused_within_the_epoch_bound() {
    let app = accounts_app().await;
    let (token, agent) = play_token(&app).await;
    // A second API process caches the identity too.
    let other = crate::harness::spawn_app_beside(&app, |_| {}).await;
    let poll = |base: String| {
        let http = app.http.clone();
        let token = token.clone();
        async move {
            // Needs the play scope: a known token gets past the caller check (then 404).
            http.get(format!(
                "{base}/api/v1/agent/sessions/0000-nosuchsession/state"
            ))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
        }
    };
    let (a, b) = (
        format!("http://{}", app.addr),
        format!("http://{}", other.addr),
    );
    // Both processes cache the identity.
    assert_ne!(poll(a.clone()).await, 401);
    assert_ne!(poll(b.clone()).await, 401);
    let listed = app.auth.list_tokens().await.unwrap();
    assert!(listed
        .iter()
        .any(|t| t.agent == agent && t.name.as_deref() == Some("Fisch")));
    horst_operator::revoke_token(&app.store, &app.auth, "olga", &agent)
        .await
        .unwrap();
    for base in [a, b] {
        assert!(
            crate::harness::eventually(std::time::Duration::from_secs(10), async || {
                poll(base.clone()).await == 401
            })
            .await,
            "{base} still accepts a revoked token (the bound is EPOCH_CHECK, 1 s; the wait is generous for CI)"
        );
    }
    let log = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(
        (log[0].action.as_str(), log[0].target.as_str()),
        ("token_revoke", agent.as_str())
    );
}

/// A revocation reaches the other API processes at once, not up to `EPOCH_CHECK` (1 s)
/// later: the process that revokes announces it on `auth:revoked`, and every API process's
/// identity cache reads the epoch again at its next request. The test waits until the other
/// process's own listener has heard the announcement (its notifier tells the cache before
/// any waiter), then asks it once: refused, with no waiting. Before the change the other
/// process answered from its cache (read well within the second) and let the token in.
#[tokio::test]
async fn a_revoked_rcadia_token_is_refused_by_another_process_as_soon_as_it_hears_of_it() {
    let app = accounts_app().await;
    let other = crate::harness::spawn_app_beside(&app, |_| {}).await;
    assert!(
        other
            .queue
            .notifier()
            .ready(std::time::Duration::from_secs(10))
            .await
    );
    let mut heard =
        other
            .queue
            .notifier()
            .subscribe(&horst_identity::auth::Auth::revocation_channel(
                &other.store,
            ));
    for round in 0..3 {
        let (token, agent) = play_token(&app).await;
        let poll = async || {
            other
                .http
                .get(other.url("/api/v1/agent/sessions/0000-nosuchsession/state"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        };
        // The other process knows the token and caches it (its epoch just read).
        assert_ne!(poll().await, 401, "round {round}");
        assert_ne!(poll().await, 401, "round {round}");
        heard.mark_seen();
        horst_operator::revoke_token(&app.store, &app.auth, "olga", &agent)
            .await
            .unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(10), heard.changed())
            .await
            .expect("the other process never heard of the revocation");
        assert_eq!(
            poll().await,
            401,
            "round {round}: the other process still let a revoked token in after hearing of it"
        );
    }
}

/// The real binary at debug level: no password, key, token, JWT, session id or CSRF token
/// reaches a log line, and no listing shows one.
#[tokio::test]
async fn no_secret_reaches_a_log_line_or_a_listing() {
    use crate::harness::HorstProcess;
    let dir = tempfile::tempdir().unwrap();
    let mut horst = HorstProcess::spawn(
        &["up", "--listen", "127.0.0.1:0", "--data", "data"],
        &[
            ("HORST_LOG", "debug"),
            ("HORST_GATEWAY_MODE", "on"),
            ("HORST_GATEWAY_SIGN_UP", "true"),
            ("HORST_GATEWAY_ADMIN_TOKEN", ADMIN_TOKEN),
        ],
        dir.path(),
    );
    let addr = horst.wait_listening();
    let base = format!("http://{addr}");
    let mut secrets: Vec<String> = vec![PASSWORD.into(), ADMIN_TOKEN.into()];
    let mut v = Visitor {
        base: base.clone(),
        http: reqwest::Client::new(),
        cookie: None,
        csrf: None,
    };
    let r = v
        .post(
            "/api/account/sign-up",
            json!({ "name": "fuchs", "password": PASSWORD }),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    secrets.extend(v.cookie.clone().map(|c| c.1));
    secrets.extend(v.csrf.clone());
    let key = v.post("/api/account/keys", json!({})).await.body["key"]
        .as_str()
        .unwrap()
        .to_string();
    secrets.push(key.clone());
    let http = reqwest::Client::new();
    let mcp = |k: String| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            http.post(format!("{base}/api/mcp"))
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-11-25")
                .bearer_auth(k)
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"my_submissions","arguments":{}}}"#)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(mcp(key.clone()).await, 200);
    let wrong_key = format!("gcv_{}", "0".repeat(48));
    secrets.push(wrong_key.clone());
    assert_eq!(mcp(wrong_key).await, 401);
    let wrong_password = "ganz falsches passwort";
    secrets.push(wrong_password.into());
    assert_eq!(v.sign_in("fuchs", wrong_password).await.status, 401);
    let jwt: Value = http
        .post(format!("{base}/api/v1/auth/session"))
        .json(&json!({ "username": "fuchs", "password": PASSWORD }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    secrets.push(jwt["token"].as_str().unwrap().into());
    let mut op = Visitor {
        base: base.clone(),
        http: reqwest::Client::new(),
        cookie: None,
        csrf: None,
    };
    let r = op
        .post(
            "/api/admin/session",
            json!({ "token": ADMIN_TOKEN, "operatorName": "Olga" }),
        )
        .await;
    assert_eq!(r.status, 200);
    secrets.extend(op.cookie.clone().map(|c| c.1));
    secrets.extend(op.csrf.clone());
    let r = op
        .post("/api/admin/admin-tokens", json!({ "label": "next" }))
        .await;
    secrets.push(r.body["token"].as_str().unwrap().into());
    let r = op
        .post(
            "/api/admin/tokens",
            json!({ "scopes": ["play"], "name": "Fisch" }),
        )
        .await;
    secrets.push(r.body["token"].as_str().unwrap().into());
    let r = op
        .post(
            "/api/admin/users",
            json!({ "name": "dachs", "password": "dachs passwort 1" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    secrets.push("dachs passwort 1".into());

    let mut listings = String::new();
    for path in [
        "/api/admin/keys?revoked=true",
        "/api/admin/tokens",
        "/api/admin/admin-tokens",
        "/api/admin/accounts",
        "/api/admin/audit",
        "/api/account/keys",
        "/api/account/session",
    ] {
        let who = if path.starts_with("/api/account") {
            &mut v
        } else {
            &mut op
        };
        let r = who.get(path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        listings.push_str(&r.body.to_string());
    }

    horst.signal(libc::SIGTERM);
    horst.wait_exit(std::time::Duration::from_secs(30));
    let logs = format!("{}\n{}", horst.stdout(), horst.stderr());
    assert!(
        logs.contains("/api/account/sign-in"),
        "the requests were logged:\n{logs}"
    );
    for s in &secrets {
        assert!(!logs.contains(s.as_str()), "a secret in the log: {s}");
        // The session listing carries this session's own CSRF token (the page needs it).
        if Some(s) != v.csrf.as_ref() {
            assert!(!listings.contains(s.as_str()), "a secret in a listing: {s}");
        }
    }
}

/// `horst admin` with `HORST_OPERATOR=olga`; stdin is given (passwords).
/// [`admin_cli`] that must succeed: its stdout and stderr.
pub fn admin_cli_ok(app: &TestApp, args: &[&str], stdin: &str) -> (String, String) {
    let (ok, out, err) = admin_cli(app, args, stdin);
    assert!(ok, "horst admin {args:?}: {err}");
    (out, err)
}

pub fn admin_cli(app: &TestApp, args: &[&str], stdin: &str) -> (bool, String, String) {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_horst"));
    cmd.arg("admin")
        .args(args)
        .args(["--redis", &app.redis_url])
        .current_dir(dir.path())
        .env("HORST_OPERATOR", "olga")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("HORST_") && k != "HORST_OPERATOR" {
            cmd.env_remove(k);
        }
    }
    let mut child = cmd.spawn().expect("spawn horst admin");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// `horst admin` is an operator's command, not a server: run with a `gateway.admin_token`
/// in its environment (an operator's shell), it stores no admin token, and a serving
/// process that stores its configured one puts it in the audit trail.
#[tokio::test]
async fn an_admin_command_seeds_no_admin_token_and_a_server_audits_its_seed() {
    let app = crate::harness::spawn_app().await;
    let before = horst_identity::admin_tokens::list(&app.store)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_horst"));
    for (k, _) in std::env::vars() {
        if k.starts_with("HORST_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd
        .args(["admin", "status", "--redis", &app.redis_url])
        .current_dir(dir.path())
        .env("HORST_OPERATOR", "olga")
        .env(
            "HORST_GATEWAY_ADMIN_TOKEN",
            "a-token-from-an-operators-shell-0123456789",
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = horst_identity::admin_tokens::list(&app.store)
        .await
        .unwrap();
    assert_eq!(
        after.len(),
        before.len(),
        "`horst admin status` stored an admin token: {after:?}"
    );

    let added = horst_operator::seed_admin_token(&app.store, "a-served-token-0123456789abcdef")
        .await
        .unwrap();
    assert!(added);
    let log = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(log[0].action, "admin_token_create", "{log:?}");
    assert_eq!(log[0].who, "config");
    assert_eq!(
        log[0].target,
        horst_identity::admin_tokens::config_id("a-served-token-0123456789abcdef")
    );
    // Seeded once: the next start adds nothing and audits nothing.
    assert!(
        !horst_operator::seed_admin_token(&app.store, "a-served-token-0123456789abcdef")
            .await
            .unwrap()
    );
    assert_eq!(
        horst_operator::audit_log(&app.store, 0, 5)
            .await
            .unwrap()
            .len(),
        log.len().max(1)
    );
}

/// An operator's password reset ends sessions and JWTs but revokes agent keys only when asked,
/// as the person's own change on `/account` does: the CLI says how many keys still work;
/// `--revoke-keys` (REST `"revokeKeys": true`) revokes them, audited with their prefixes.
#[tokio::test]
async fn an_operator_password_reset_revokes_agent_keys_only_when_asked() {
    let app = accounts_app().await;
    let run = |args: &[&str], stdin: &str| admin_cli_ok(&app, args, stdin);
    let works = async |key: &str| {
        app.call("my_submissions", json!({}), Some(key))
            .await
            .status
    };
    run(
        &["user", "create", "fuchs", "--trust", "1"],
        "erstes passwort\n",
    );
    let (key, _) = run(&["key", "create", "fuchs", "--label", "cli"], "");
    let key = key.trim().to_string();
    let (_, err) = run(&["user", "passwd", "fuchs"], "zweites passwort\n");
    assert!(
        err.contains("1 agent key(s) still work (revoke them with --revoke-keys)"),
        "{err}"
    );
    assert_eq!(works(&key).await, 200, "a plain reset leaves the key");
    let log = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    assert_eq!(
        (log[0].action.as_str(), &log[0].detail),
        ("user_passwd", &json!({ "keysRevoked": [] }))
    );

    let (_, err) = run(
        &["user", "passwd", "fuchs", "--revoke-keys"],
        "drittes passwort\n",
    );
    assert!(err.contains("1 agent key(s) revoked"), "{err}");
    assert_eq!(works(&key).await, 401, "revoked");
    let log = horst_operator::audit_log(&app.store, 0, 1).await.unwrap();
    let revoked = log[0].detail["keysRevoked"].as_array().unwrap();
    assert!(
        log[0].action == "user_passwd"
            && revoked.len() == 1
            && key.starts_with(revoked[0].as_str().unwrap()),
        "{log:?}"
    );

    // The same over REST.
    let (second, _) = run(&["key", "create", "fuchs", "--label", "zwei"], "");
    let second = second.trim().to_string();
    let mut op = Visitor::new(&app);
    let r = op
        .post(
            "/api/admin/session",
            json!({ "token": ADMIN_TOKEN, "operatorName": "Olga" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let path = "/api/admin/users/fuchs/password";
    let r = op
        .post(path, json!({ "password": "viertes passwort" }))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body,
        json!({ "ok": true, "keysRevoked": [], "keysRemaining": 1 })
    );
    assert_eq!(works(&second).await, 200);
    let r = op
        .post(
            path,
            json!({ "password": "fuenftes passwort", "revokeKeys": true }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["keysRemaining"], 0, "{}", r.body);
    assert_eq!(works(&second).await, 401);
}

#[tokio::test]
async fn the_credential_lifecycle_from_the_cli() {
    let app = accounts_app().await;
    let run = |args: &[&str], stdin: &str| admin_cli_ok(&app, args, stdin);
    run(&["sign-up", "closed"], "");
    let (out, _) = run(&["switches"], "");
    let s: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(s["signUp"], false);
    run(
        &["user", "create", "fuchs", "--trust", "1"],
        "erstes passwort\n",
    );
    let mut v = Visitor::new(&app);
    assert_eq!(v.sign_in("fuchs", "erstes passwort").await.status, 200);
    run(&["user", "passwd", "fuchs"], "zweites passwort\n");
    assert_eq!(
        v.get("/api/account/keys").await.status,
        401,
        "the session ended"
    );
    assert_eq!(v.sign_in("fuchs", "zweites passwort").await.status, 200);
    run(&["account", "operator", "fuchs", "on"], "");

    let (key, _) = run(&["key", "create", "fuchs", "--label", "cli"], "");
    let key = key.trim().to_string();
    let (out, err) = run(&["key", "list", "--account", "fuchs"], "");
    assert!(err.contains("1 in all"), "{err}");
    assert!(out.contains(&key[..12]) && !out.contains(&key), "{out}");
    let (out, err) = run(&["account", "list", "--kind", "human", "--limit", "1"], "");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(err.contains("in all"), "{err}");
    let a: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (a["name"].as_str(), a["operator"].as_bool()),
        (Some("fuchs"), Some(true))
    );

    let (token, err) = run(
        &["token", "create", "--scopes", "play", "--name", "Fisch"],
        "",
    );
    let agent = err
        .split_whitespace()
        .find(|w| w.starts_with("agt_"))
        .unwrap()
        .to_string();
    let (out, _) = run(&["token", "list"], "");
    assert!(out.contains(&agent) && !out.contains(token.trim()), "{out}");
    // When it was made, as every other listing says it (ISO), beside the milliseconds.
    let listed: Value = serde_json::from_str(
        out.lines()
            .find(|l| l.contains(&agent))
            .expect("the new token listed"),
    )
    .unwrap();
    let ms = listed["createdAtMs"].as_u64().expect("createdAtMs");
    assert_eq!(
        listed["createdAt"].as_str(),
        Some(horst_dates::rfc3339_ms(ms).as_str()),
        "{listed}"
    );
    run(&["token", "revoke", &agent], "");

    let (new_admin, _) = run(&["admin-token", "create", "--label", "next"], "");
    let (out, _) = run(&["admin-token", "list"], "");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(!out.contains(new_admin.trim()) && !out.contains(ADMIN_TOKEN));
    let config_id = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["createdBy"] == "config")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    run(&["admin-token", "retire", &config_id], "");
    // The last active one stays.
    let (out, _) = run(&["admin-token", "list"], "");
    let last = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["active"] == true)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (ok, _, err) = admin_cli(&app, &["admin-token", "retire", &last], "");
    assert!(
        !ok && err.contains("conflict") && err.contains("last active"),
        "{err}"
    );

    run(&["user", "delete", "fuchs"], "");
    assert_eq!(
        app.call("my_submissions", json!({}), Some(&key))
            .await
            .status,
        401
    );
    let (ok, _, err) = admin_cli(&app, &["user", "passwd", "fuchs"], "drittes passwort\n");
    assert!(!ok && err.contains("not_found"), "{err}");

    let log = horst_operator::audit_log(&app.store, 0, 20).await.unwrap();
    let mine: Vec<&str> = log
        .iter()
        .filter(|e| e.who == "olga")
        .map(|e| e.action.as_str())
        .collect();
    assert_eq!(
        mine,
        [
            "user_delete",
            "admin_token_retire",
            "admin_token_create",
            "token_revoke",
            "token_create",
            "key_create",
            "operator_role",
            "user_passwd",
            "user_create",
            "sign_up"
        ]
    );
}

/// A name or id on `horst admin`'s command line that no record can have (`anna:keys` names the
/// key listing of `anna`) is refused before anything is looked up, with the rule, as the REST
/// admin API refuses it on its paths; it read another record's key and ended in an internal
/// error (WRONGTYPE) before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_cli_refuses_names_and_ids_no_record_can_have() {
    let app = crate::harness::spawn_app().await;
    // A real account, so `anna:keys` (its keys' set) exists and has another type.
    let (ok, _, err) = admin_cli(&app, &["account", "create", "anna"], "");
    assert!(ok, "{err}");
    // An operator's command says on stderr only what went wrong (and what it must show
    // there): no serving role's info lines.
    if std::env::var_os("RUST_LOG").is_none() {
        assert!(!err.contains("connected to Redis"), "{err}");
    }
    let (ok, _, err) = admin_cli(&app, &["key", "create", "anna"], "");
    assert!(ok, "{err}");
    let account = "no account can have this name";
    let id = "nothing has this id";
    let level = "no level can have this name";
    let cases: &[(&[&str], &str)] = &[
        (&["account", "block", "anna:keys"], account),
        (&["account", "unblock", "anna:keys"], account),
        (&["account", "trust", "anna:keys", "1"], account),
        (&["account", "operator", "anna:keys", "on"], account),
        (&["key", "create", "anna:keys"], account),
        (&["key", "list", "--account", "anna:keys"], account),
        (&["key", "revoke", "gcv_x:y"], id),
        (&["user", "delete", "anna:keys"], account),
        (&["job", "show", "j:1"], id),
        (&["job", "cancel", "j 1", "--reason", "x"], id),
        (&["job", "list", "--account", "Anna"], account),
        (&["level", "quarantine", "rev:1"], id),
        (&["level", "checks", "rev/1"], id),
        (&["level", "promote", "rev1", "--expect", "a:b"], id),
        (&["level", "rollback", "lvl:keys"], level),
        (&["level", "list", "--name", "a b"], level),
        (&["board", "hide", "p:posts"], id),
        (&["board", "show", "t:posts"], id),
        (&["board", "reply", "t:posts", "hello"], id),
        (&["board", "status", "t:posts", "open"], id),
        (&["messages", "read", "m:1"], id),
        (&["admin-token", "retire", "a:b"], id),
        (&["token", "revoke", "agt_x:y"], id),
        (&["rating", "reset", "agt:1", "--game", "nim"], id),
    ];
    for (args, rule) in cases {
        let (ok, out, err) = admin_cli(&app, args, "");
        assert!(!ok, "{args:?} was accepted: {out}");
        assert!(err.contains(rule), "{args:?}: {err}");
        assert!(!err.to_lowercase().contains("internal"), "{args:?}: {err}");
    }
    // The real account is untouched.
    let (ok, out, err) = admin_cli(&app, &["account", "list", "--q", "anna"], "");
    assert!(ok, "{err}");
    assert!(out.contains("\"blocked\":false"), "{out}");
}

/// A compressed body on the account routes is refused as what it is (415 `content_type`
/// naming the coding, `Accept-Encoding: identity`), as on MCP and `/api/agent-keys`. It was
/// read as the JSON text itself: a gzip body was "not valid JSON" without saying why, and a
/// plain body labelled gzip was answered as if the label were not there (here: a sign-up).
#[tokio::test]
async fn a_compressed_body_on_the_account_routes_is_415_naming_the_coding() {
    let app = accounts_app().await;
    let mut v = Visitor::new(&app);
    let body = json!({ "name": "dachs", "password": PASSWORD });
    for coding in ["gzip", "br, gzip"] {
        let r = v
            .send_with(
                reqwest::Method::POST,
                "/api/account/sign-up",
                Some(body.clone()),
                &[
                    ("sec-fetch-site", "same-origin"),
                    ("content-encoding", coding),
                ],
            )
            .await;
        assert_eq!(r.status, 415, "{coding}: {}", r.body);
        assert_eq!(r.body["code"], "content_type", "{}", r.body);
        let m = r.body["error"].as_str().unwrap_or_default();
        assert!(m.contains("Content-Encoding") && m.contains(coding), "{m}");
    }
    // Nothing was made: the name is still free, and `identity` is the body as it is.
    let r = v
        .send_with(
            reqwest::Method::POST,
            "/api/account/sign-up",
            Some(body),
            &[
                ("sec-fetch-site", "same-origin"),
                ("content-encoding", "identity"),
            ],
        )
        .await;
    assert!(r.status < 300, "{}: {}", r.status, r.body);
}
