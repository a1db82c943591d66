//! Every operator action writes an audit entry. The list of actions is the compiler's:
//! `operator::Action::ALL` comes from the same declaration as the enum, and `perform` below
//! matches on the enum without a wildcard, so a new action does not compile until this test
//! performs it (through the library call every entry point, CLI, REST and page, goes through)
//! and checks its entry.

use redis::AsyncCommands;
use serde_json::json;

use horst_operator::{self as operator, Action};

use crate::harness::{ok_result, spawn_app_with, TestApp, LEVEL_MAP, LEVEL_REPLAY};

const WHO: &str = "audit-olga";

/// Fixture state the actions work on.
struct Fixture {
    thread: String,
    first_post: String,
    message: String,
    key_prefix: Option<String>,
    token_agent: Option<String>,
    admin_token: Option<String>,
}

async fn revision(app: &TestApp, id: &str) {
    let s = &app.store;
    let _: () = s
        .conn()
        .hset_multiple(
            s.key(&format!("rev:{id}")),
            &[
                ("revisionId", id),
                ("name", "gipfel"),
                ("owner", "anna"),
                ("engineVersion", horst_engine::engine_version()),
                ("map", LEVEL_MAP),
                ("replay", LEVEL_REPLAY),
            ],
        )
        .await
        .unwrap();
    let _: () = s
        .conn()
        .set(s.key(&format!("rev:{id}:state")), "labor")
        .await
        .unwrap();
}

/// A simulation of anna's admitted (no worker runs it) under idempotency key `key`: its id.
async fn waiting_simulation(app: &TestApp, key: &str) -> String {
    match app
        .queue
        .admit(horst_queue::JobSpec {
            kind: horst_queue::JobKind::Simulate,
            account: "anna".into(),
            trust: 1,
            idempotency_key: key.into(),
            input: horst_queue::JobInput::simulate("m", serde_json::Value::Null),
        })
        .await
        .unwrap()
    {
        horst_queue::Admission::New(job) => job.id,
        other => panic!("{other:?}"),
    }
}

async fn perform(app: &TestApp, f: &mut Fixture, action: Action) -> String {
    let (s, auth) = (&app.store, &app.auth);
    match action {
        Action::Promote => {
            operator::promote(s, WHO, "r2", Some("r1")).await.unwrap();
            "r2".into()
        }
        Action::Rollback => {
            operator::rollback(s, WHO, "gipfel", &Default::default())
                .await
                .unwrap();
            "gipfel".into()
        }
        Action::Quarantine => {
            operator::quarantine(s, WHO, "r2").await.unwrap();
            "r2".into()
        }
        Action::Recheck => {
            horst_operator::start_recheck(s, &app.queue, WHO, "r1")
                .await
                .unwrap();
            "r1".into()
        }
        Action::Block => {
            operator::set_blocked(s, auth, WHO, "anna", true)
                .await
                .unwrap();
            "anna".into()
        }
        Action::Unblock => {
            operator::set_blocked(s, auth, WHO, "anna", false)
                .await
                .unwrap();
            "anna".into()
        }
        Action::Trust => {
            operator::set_trust(s, WHO, "anna", 1).await.unwrap();
            "anna".into()
        }
        Action::HidePost => {
            operator::hide_post(s, WHO, &f.first_post, true)
                .await
                .unwrap();
            f.first_post.clone()
        }
        Action::UnhidePost => {
            operator::hide_post(s, WHO, &f.first_post, false)
                .await
                .unwrap();
            f.first_post.clone()
        }
        Action::ThreadStatus => {
            operator::thread_status(s, WHO, &f.thread, "planned")
                .await
                .unwrap();
            f.thread.clone()
        }
        Action::Reply => {
            operator::reply(s, WHO, &f.thread, "Danke!").await.unwrap();
            f.thread.clone()
        }
        Action::Publish => {
            operator::publish_thread(s, WHO, &f.thread, true)
                .await
                .unwrap();
            f.thread.clone()
        }
        Action::Unpublish => {
            operator::publish_thread(s, WHO, &f.thread, false)
                .await
                .unwrap();
            f.thread.clone()
        }
        Action::QuotasReload => {
            operator::reload_quotas(s, WHO, &horst_queue::Quotas::from_config(&app.config))
                .await
                .unwrap();
            "quotas".into()
        }
        Action::MarkRead => {
            operator::mark_read(s, WHO, &f.message).await.unwrap();
            f.message.clone()
        }
        Action::GatewayMode => {
            operator::set_gateway_mode(s, WHO, horst_config::GatewayMode::On)
                .await
                .unwrap();
            "gateway".into()
        }
        Action::SelfService => {
            operator::set_self_service(s, WHO, false).await.unwrap();
            "self_service".into()
        }
        Action::SignUp => {
            operator::set_sign_up(s, WHO, true).await.unwrap();
            "sign_up".into()
        }
        Action::AccountCreate => {
            operator::create_account(s, WHO, "kiosk", 0).await.unwrap();
            "kiosk".into()
        }
        Action::OperatorRole => {
            app.person("paul", "passwort fuer paul").await;
            operator::set_operator_role(s, WHO, "paul", true)
                .await
                .unwrap();
            "paul".into()
        }
        Action::KeyCreate => {
            let k = operator::create_key(s, WHO, "kiosk", Some("Tresen"))
                .await
                .unwrap();
            f.key_prefix = Some(k.prefix.clone());
            k.prefix
        }
        Action::KeyRevoke => {
            let prefix = f.key_prefix.clone().expect("KeyCreate comes first");
            operator::revoke_key(s, WHO, &prefix).await.unwrap();
            prefix
        }
        Action::TokenCreate => {
            let (_, agent) = operator::create_token(s, auth, WHO, &["play".into()], None, false)
                .await
                .unwrap();
            f.token_agent = Some(agent.clone());
            agent
        }
        Action::TokenLimit => {
            let agent = f.token_agent.clone().expect("TokenCreate comes first");
            operator::set_token_burst(s, auth, WHO, &agent, Some(30))
                .await
                .unwrap();
            agent
        }
        Action::TokenRevoke => {
            let agent = f.token_agent.clone().expect("TokenCreate comes first");
            operator::revoke_token(s, auth, WHO, &agent).await.unwrap();
            agent
        }
        Action::UserCreate => {
            operator::create_user(s, auth, WHO, "paula", "passwort fuer paula", 0)
                .await
                .unwrap();
            "paula".into()
        }
        Action::UserPasswd => {
            operator::set_user_password(s, auth, WHO, "paula", "neues passwort paula", false)
                .await
                .unwrap();
            "paula".into()
        }
        Action::UserDelete => {
            operator::delete_user(s, auth, WHO, "paula").await.unwrap();
            "paula".into()
        }
        Action::AdminTokenCreate => {
            let (_, info) = operator::create_admin_token(s, WHO, Some("next"))
                .await
                .unwrap();
            f.admin_token = Some(info.id.clone());
            info.id
        }
        Action::AdminTokenRetire => {
            let id = f.admin_token.clone().expect("AdminTokenCreate comes first");
            operator::retire_admin_token(s, WHO, &id).await.unwrap();
            id
        }
        Action::PublishBuiltin => {
            let out = horst_operator::publish_builtin(s, WHO, &horst_levels::BUILTIN[..1])
                .await
                .unwrap();
            assert_eq!(out[0].action, "published", "{:?}", out[0].detail);
            out[0].revision_id.clone()
        }
        Action::JobCancel => {
            let job = waiting_simulation(app, "audit-cancel").await;
            horst_operator::jobs::cancel_job(s, &app.queue, WHO, &job, "audit test")
                .await
                .unwrap();
            job
        }
        Action::JobCancelAccount => {
            let job = waiting_simulation(app, "audit-cancel-all").await;
            let cancelled =
                horst_operator::jobs::cancel_account_jobs(s, &app.queue, WHO, "anna", "audit test")
                    .await
                    .unwrap();
            assert_eq!(cancelled, [job]);
            "anna".into()
        }
        Action::TableEnd => {
            let (host, _) = crate::rcadia_common::cast(app, 0).await;
            let id = host
                .create(crate::rcadia_common::two_player(json!({})))
                .await;
            operator::end_table(&app.rcadia, WHO, &id, "audit test")
                .await
                .unwrap();
            id
        }
        Action::RatingReset => {
            operator::ratings::reset_rating(&app.rcadia, WHO, "chess", "agt_0badc0de")
                .await
                .unwrap();
            "agt_0badc0de".into()
        }
        Action::RatingExclude => {
            operator::ratings::exclude_rating(&app.rcadia, WHO, "chess", "agt_0badc0de")
                .await
                .unwrap();
            "agt_0badc0de".into()
        }
    }
}

#[tokio::test]
async fn every_operator_action_writes_an_audit_entry() {
    let app = spawn_app_with(|c| {
        c.gateway.mode = horst_config::GatewayMode::On;
        c.gateway.admin_token = "audit-test-admin-token-0123456789abcdef".into();
    })
    .await;
    let key = app.agent_key("anna", 0).await;
    revision(&app, "r1").await;
    revision(&app, "r2").await;
    operator::promote(&app.store, "setup", "r1", None)
        .await
        .unwrap();
    let t = ok_result(
        &app.call(
            "write_post",
            json!({"kind": "idea", "title": "Mehr Dohlen", "body": "bitte"}),
            Some(&key),
        )
        .await,
    );
    let m = ok_result(
        &app.call(
            "contact_admin",
            json!({"category": "question", "subject": "Hallo", "message": "Wie?"}),
            Some(&key),
        )
        .await,
    );
    let mut f = Fixture {
        thread: t["threadId"].as_str().unwrap().into(),
        first_post: t["postId"].as_str().unwrap().into(),
        message: m["messageId"].as_str().unwrap().into(),
        key_prefix: None,
        token_agent: None,
        admin_token: None,
    };
    assert!(
        Action::ALL.len() >= 29,
        "the list shrank: {:?}",
        Action::ALL
    );
    let mut names = std::collections::BTreeSet::new();
    for &action in Action::ALL {
        assert!(names.insert(action.as_str()), "{action} is named twice");
        let target = perform(&app, &mut f, action).await;
        let newest = operator::audit_log(&app.store, 0, 1).await.unwrap();
        let e = newest
            .first()
            .unwrap_or_else(|| panic!("{action}: no audit entry"));
        assert_eq!(
            e.action,
            action.as_str(),
            "{action} wrote no audit entry of its own"
        );
        assert_eq!(e.who, WHO, "{action}");
        assert_eq!(e.target, target, "{action}");
        assert!(e.at.ends_with('Z'), "{action}: {}", e.at);
    }
}
