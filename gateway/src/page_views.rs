//! HTML page views of the game pages, counted per page and UTC day, without identities:
//! no address, cookie, user agent or referrer is read or kept, only a count. The admin
//! overview shows them beside the board-read counter (which counts agents' authenticated
//! board reads, a different thing).
//!
//! Layout (under the store prefix):
//! - `pageviews:day:<YYYY-MM-DD>` hash: page -> views that UTC day (kept 400 days)
//! - `pageviews:total` hash: page -> views ever

use std::collections::BTreeMap;
use std::sync::Mutex;

use redis::{FromRedisValue, ParsingError, Value};
use serde::Serialize;

use horst_store::script::{Argv, Decl, Script, Writes};
use horst_store::Store;

use crate::error::ToolError;
use crate::keys;

/// The pages that are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    /// `/`: the game with its level list and the Labor tab.
    Game,
    /// `/level/<revisionId>`: a shared level page.
    Level,
    /// `/board.html`: the public board.
    Board,
}

impl Page {
    pub const ALL: [Page; 3] = [Page::Game, Page::Level, Page::Board];

    pub fn key(self) -> &'static str {
        match self {
            Page::Game => "game",
            Page::Level => "level",
            Page::Board => "board",
        }
    }
}

const DAY_KEEP_SECONDS: u64 = 400 * 86_400;

/// `lua/page_view.lua`: the day comes from the Redis server's clock, the one clock every
/// process shares; the caller names the day it expects (cached per process), so a count is
/// one round trip except on the first call and after a UTC midnight.
/// A lost count after a failover is not worth a `WAIT` on every page view.
pub(crate) static COUNT: Script<Counted> = Script::new(Decl {
    file: horst_store::lua!("lua/page_view.lua"),
    keys: 2,
    argv: Argv::Exactly(3),
    writes: Writes::PrimaryOnly,
});

/// `page_view.lua`'s reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Counted {
    Yes,
    /// The server's UTC day is this one, not the one the caller named: call again with it.
    OtherDay(String),
}

impl FromRedisValue for Counted {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        if v == Value::Int(1) {
            return Ok(Counted::Yes);
        }
        let v: Vec<String> = redis::from_redis_value(v)?;
        match v.as_slice() {
            [k, d] if k == "day" => Ok(Counted::OtherDay(d.clone())),
            _ => Err(ParsingError::from(format!(
                "unexpected reply of page_view: {v:?}"
            ))),
        }
    }
}

/// The UTC day this process last counted on.
static DAY: Mutex<String> = Mutex::new(String::new());

/// Counts one view of `page`.
pub async fn count(store: &Store, page: Page) -> Result<(), ToolError> {
    let mut day = DAY.lock().map(|d| d.clone()).unwrap_or_default();
    for _ in 0..3 {
        let reply = COUNT
            .call(store)
            .key(keys::page_views_day(store, &day))
            .key(keys::page_views_total(store))
            .arg(page.key())
            .arg(DAY_KEEP_SECONDS)
            .arg(&day)
            .run()
            .await?;
        match reply {
            Counted::Yes => return Ok(()),
            Counted::OtherDay(today) => {
                day = today;
                if let Ok(mut cached) = DAY.lock() {
                    cached.clone_from(&day);
                }
            }
        }
    }
    Err(ToolError::internal("page_view.lua: the day did not settle"))
}

/// Views today (UTC) and ever, per page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub today: BTreeMap<&'static str, u64>,
    pub total: BTreeMap<&'static str, u64>,
    /// The UTC day `today` counts.
    pub day: String,
}

pub async fn summary(store: &Store) -> Result<Summary, ToolError> {
    let now = crate::redis_now_ms(store).await?;
    let day = crate::board::utc_day(now);
    let fields: Vec<&str> = Page::ALL.iter().map(|p| p.key()).collect();
    let (today, total): (Vec<Option<u64>>, Vec<Option<u64>>) = redis::pipe()
        .cmd("HMGET")
        .arg(keys::page_views_day(store, &day))
        .arg(&fields)
        .cmd("HMGET")
        .arg(keys::page_views_total(store))
        .arg(&fields)
        .query_async(&mut store.conn())
        .await?;
    let by_page = |v: Vec<Option<u64>>| {
        Page::ALL
            .iter()
            .zip(v)
            .map(|(p, n)| (p.key(), n.unwrap_or(0)))
            .collect()
    };
    Ok(Summary {
        today: by_page(today),
        total: by_page(total),
        day,
    })
}
