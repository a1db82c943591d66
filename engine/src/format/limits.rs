//! Size limits of maps and replays. They are part of `policyVersion`.

use serde::Serialize;

pub const MAX_MAP_BYTES: usize = 256 * 1024;
pub const MAX_LINE_CHARS: usize = 1024;
pub const MAX_NAME_CHARS: usize = 60;
pub const MIN_WIDTH: i64 = 1;
pub const MAX_WIDTH: i64 = 512;
pub const MIN_HEIGHT: i64 = 1;
pub const MAX_HEIGHT: i64 = 128;
pub const MAX_ENTITIES: usize = 512;
pub const MAX_NESTS: usize = 16;
pub const MAX_ENEMIES: usize = 128;
pub const MAX_ROCKFALLS: usize = 32;
pub const MAX_PLATFORMS: usize = 64;
pub const MAX_SPRINGS: usize = 64;
/// Cracked rock and crumbling ledge tiles together.
pub const MAX_DYNAMIC_TILES: usize = 4096;
/// Validation stops collecting after this many errors (and says so).
pub const MAX_REPORTED_ERRORS: usize = 100;
pub const MAX_REPORTED_WARNINGS: usize = 100;

pub const RENDER_MAX_WIDTH: i64 = 120;
pub const RENDER_MAX_HEIGHT: i64 = 30;

pub const REPLAY_MAX_BYTES: usize = 1024 * 1024;
pub const REPLAY_MAX_ACTIONS: usize = 36_000;
pub const REPLAY_MAX_TOTAL_TICKS: u64 = 36_000;
pub const REPLAY_MAX_STEP_TICKS: u64 = 600;
pub const REPLAY_MAX_ACTION: u64 = 19;

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Range {
    pub min: i64,
    pub max: i64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayLimits {
    pub max_bytes: usize,
    pub max_actions: usize,
    pub max_total_ticks: u64,
    pub action: Range,
    pub ticks: Range,
    pub seed: Range,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Limits {
    pub max_map_bytes: usize,
    pub max_line_chars: usize,
    pub max_name_chars: usize,
    pub width: Range,
    pub height: Range,
    pub max_entities: usize,
    pub max_nests: usize,
    pub max_enemies: usize,
    pub max_rockfalls: usize,
    pub max_platforms: usize,
    pub max_springs: usize,
    pub max_dynamic_tiles: usize,
    pub max_reported_errors: usize,
    pub render_max_width: i64,
    pub render_max_height: i64,
    pub replay: ReplayLimits,
    pub ticks_per_second: u32,
}

pub fn limits() -> Limits {
    Limits {
        max_map_bytes: MAX_MAP_BYTES,
        max_line_chars: MAX_LINE_CHARS,
        max_name_chars: MAX_NAME_CHARS,
        width: Range {
            min: MIN_WIDTH,
            max: MAX_WIDTH,
        },
        height: Range {
            min: MIN_HEIGHT,
            max: MAX_HEIGHT,
        },
        max_entities: MAX_ENTITIES,
        max_nests: MAX_NESTS,
        max_enemies: MAX_ENEMIES,
        max_rockfalls: MAX_ROCKFALLS,
        max_platforms: MAX_PLATFORMS,
        max_springs: MAX_SPRINGS,
        max_dynamic_tiles: MAX_DYNAMIC_TILES,
        max_reported_errors: MAX_REPORTED_ERRORS,
        render_max_width: RENDER_MAX_WIDTH,
        render_max_height: RENDER_MAX_HEIGHT,
        replay: ReplayLimits {
            max_bytes: REPLAY_MAX_BYTES,
            max_actions: REPLAY_MAX_ACTIONS,
            max_total_ticks: REPLAY_MAX_TOTAL_TICKS,
            action: Range {
                min: 0,
                max: REPLAY_MAX_ACTION as i64,
            },
            ticks: Range {
                min: 1,
                max: REPLAY_MAX_STEP_TICKS as i64,
            },
            seed: Range {
                min: 0,
                max: u32::MAX as i64,
            },
        },
        ticks_per_second: crate::sim::physics::TICKS_PER_SECOND,
    }
}
