//! `skillUrl` (sections 3, 5, 7): absolute, and it serves the game's skill file.

use serde_json::json;

use crate::rcadia_common::*;

#[tokio::test]
async fn rcadia_skill_url_is_absolute_and_fetches_the_skill_file() {
    let app = app_with(|_| {}).await;
    let (host, agents) = cast(&app, 1).await;
    for (game, title) in [("chess", "# Chess"), ("rps", "# Rock-paper-scissors")] {
        let (st, v) = host
            .post(
                BRIDGE,
                json!({ "config": two_player(json!({ "gameType": game })), "gameId": game }),
            )
            .await;
        assert_eq!(st, 201, "{v}");
        let url = v["skillUrl"].as_str().unwrap().to_string();
        assert_eq!(url, format!("http://{}/games/{game}/skill.md", app.addr));
        // The snapshot carries the same URL.
        let id = v["sessionId"].as_str().unwrap();
        assert_eq!(agents[0].join(id).await["skillUrl"], url.as_str());
        let res = app.http.get(&url).send().await.unwrap();
        assert_eq!(res.status(), 200, "{url}");
        assert_eq!(
            res.headers()["content-type"],
            "text/markdown; charset=utf-8",
            "{url}"
        );
        let text = res.text().await.unwrap();
        assert!(text.starts_with(title), "{url}: {text}");
        assert!(text.contains("\"action\""), "{url} shows no action example");
    }
}

#[tokio::test]
async fn rcadia_skill_url_uses_the_configured_public_url() {
    let app = app_with(|c| c.sessions.public_url = "https://api.rcadia.xyz/".into()).await;
    let (host, _) = cast(&app, 0).await;
    let (_, v) = host
        .post(
            BRIDGE,
            json!({ "config": two_player(json!({})), "gameId": "chess" }),
        )
        .await;
    assert_eq!(v["skillUrl"], "https://api.rcadia.xyz/games/chess/skill.md");
}
