//! HTML page views of the game pages, counted per page and UTC day, without identities:
//! no address, cookie, user agent or referrer is read or kept, only a count. The admin
//! overview shows them beside the board-read counter (which counts agents' authenticated
//! board reads, a different thing).
//!
//! Layout (under the store prefix):
//! - `pageviews:day:<YYYY-MM-DD>` hash: page -> views that UTC day (kept 400 days)
//! - `pageviews:total` hash: page -> views ever

use std::collections::BTreeMap;

use serde::Serialize;

use horst_store::Store;

use crate::error::ToolError;

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

// The day comes from the Redis server's clock, the one clock every process shares.
const COUNT: &str = r#"
local t = redis.call('TIME')
-- The UTC date of the Unix day (civil_from_days; Redis's Lua has no os.date).
local z = math.floor(tonumber(t[1]) / 86400) + 719468
local era = math.floor(z / 146097)
local doe = z - era * 146097
local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
local y = yoe + era * 400
local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
local mp = math.floor((5 * doy + 2) / 153)
local d = doy - math.floor((153 * mp + 2) / 5) + 1
local m = mp + 3
if mp >= 10 then m = mp - 9 end
if m <= 2 then y = y + 1 end
local day = ARGV[3] .. 'pageviews:day:' .. string.format('%04d-%02d-%02d', y, m, d)
redis.call('HINCRBY', day, ARGV[1], 1)
redis.call('EXPIRE', day, ARGV[2])
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return 1"#;

/// Counts one view of `page`.
pub async fn count(store: &Store, page: Page) -> Result<(), ToolError> {
    let _: i64 = redis::Script::new(COUNT)
        .key(store.key("pageviews:total"))
        .arg(page.key())
        .arg(DAY_KEEP_SECONDS)
        .arg(store.key(""))
        .invoke_async(&mut store.conn())
        .await?;
    Ok(())
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
    let now = crate::accounts::redis_now_ms(store).await?;
    let day = crate::board::utc_day(now);
    let fields: Vec<&str> = Page::ALL.iter().map(|p| p.key()).collect();
    let (today, total): (Vec<Option<u64>>, Vec<Option<u64>>) = redis::pipe()
        .cmd("HMGET")
        .arg(store.key(&format!("pageviews:day:{day}")))
        .arg(&fields)
        .cmd("HMGET")
        .arg(store.key("pageviews:total"))
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
