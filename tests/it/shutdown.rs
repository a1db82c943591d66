//! Graceful shutdown of the HTTP server: stop accepting, let in-flight requests finish
//! within the grace period, cut off what takes longer.

use std::time::Duration;

use axum::routing::get;
use tokio::sync::watch;

async fn serve_slow(
    grace: Duration,
    handler_takes: Duration,
) -> (
    std::net::SocketAddr,
    watch::Sender<bool>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let router = axum::Router::new().route(
        "/slow",
        get(move || async move {
            tokio::time::sleep(handler_takes).await;
            "done"
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, mut rx) = watch::channel(false);
    let server = tokio::spawn(horst_api::serve_router(
        listener,
        router,
        async move {
            let _ = rx.wait_for(|s| *s).await;
        },
        grace,
    ));
    (addr, tx, server)
}

#[tokio::test]
async fn in_flight_requests_finish_and_new_connections_are_refused() {
    let (addr, stop, server) =
        serve_slow(Duration::from_secs(30), Duration::from_millis(800)).await;
    let http = reqwest::Client::new();
    let in_flight = tokio::spawn({
        let http = http.clone();
        async move { http.get(format!("http://{addr}/slow")).send().await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(true).unwrap();
    let response = in_flight
        .await
        .unwrap()
        .expect("the in-flight request was cut off");
    assert_eq!(response.text().await.unwrap(), "done");
    // The server finished on its own, long before the grace period.
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("server did not stop after draining")
        .unwrap()
        .unwrap();
    assert!(
        reqwest::Client::new()
            .get(format!("http://{addr}/slow"))
            .send()
            .await
            .is_err(),
        "a new connection was accepted after shutdown"
    );
}

/// `serve_router` gives up waiting after the grace period and cuts off the connections still
/// open (their tasks end with the server's), so no request outlives it: whatever horst stops
/// after the server (the private Redis) is not used by a request any more.
#[tokio::test]
async fn the_server_stops_waiting_after_the_grace_period() {
    let (addr, stop, server) =
        serve_slow(Duration::from_millis(300), Duration::from_secs(60)).await;
    let in_flight = tokio::spawn(async move {
        reqwest::Client::new()
            .get(format!("http://{addr}/slow"))
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the grace period was not enforced")
        .unwrap()
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(10), in_flight)
        .await
        .expect("the request still runs after the server stopped")
        .unwrap();
    assert!(answer.is_err(), "the slow request was answered: {answer:?}");
}
