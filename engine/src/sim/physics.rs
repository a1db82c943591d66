//! The physics numbers. All units are integers: positions in sub-units (1/256 pixel), tiles of
//! 16 px (4096 sub-units), velocities in sub-units per tick, 60 ticks per second.
//! FORMAT.md lists every number here; keep the two in step.

pub const TICKS_PER_SECOND: u32 = 60;
/// Sub-units per pixel.
pub const SUB: i32 = 256;
pub const TILE_PX: i32 = 16;
/// Sub-units per tile.
pub const TILE: i32 = TILE_PX * SUB;
/// log2(TILE): tile coordinates are positions shifted right (a floor, also for negatives).
pub const TILE_SHIFT: u32 = 12;

/// The bird's hitbox: 12 x 14 px. Its position is the top-left corner of this box.
pub const PLAYER_W: i32 = 12 * SUB;
pub const PLAYER_H: i32 = 14 * SUB;

/// Full walking speed: 600 sub/tick = 2.34 px/tick = 8.8 tiles/s.
pub const RUN_SPEED: i32 = 600;
/// Slow walking: exactly 0.4 of full speed (240).
pub const SLOW_SPEED: i32 = RUN_SPEED * 2 / 5;
/// Acceleration towards the wanted speed, and deceleration when over it or not moving.
pub const GROUND_ACCEL: i32 = 60;
pub const GROUND_DECEL: i32 = 80;
pub const ICE_ACCEL: i32 = 12;
pub const ICE_DECEL: i32 = 6;
pub const AIR_ACCEL: i32 = 40;
pub const AIR_DECEL: i32 = 20;
/// On snow the wanted speed is halved.
pub const SNOW_DIVISOR: i32 = 2;

pub const GRAVITY: i32 = 96;
pub const MAX_FALL: i32 = 1792;
/// Take-off speed of a jump: rises 3.18 tiles (50.9 px) if jump is held to the apex.
pub const JUMP_SPEED: i32 = 1630;
/// Rise of a full jump in sub-units (13024 = 3.18 tiles) and of the egg boost (8424 = 2.06
/// tiles), for planners building a heuristic.
pub const JUMP_RISE: i32 = rise_height(JUMP_SPEED);
pub const BOOST_RISE: i32 = rise_height(BOOST_SPEED);
/// Whole tiles the bird's feet clear: a full jump gets onto a ledge 3 tiles up, the egg boost
/// adds 2 more, a running jump crosses a gap of about 4 tiles (7 with the boost).
pub const JUMP_HEIGHT_TILES: i32 = 3;
pub const BOOST_HEIGHT_TILES: i32 = 2;
/// Releasing jump while rising faster than this cuts the upward speed to it.
pub const JUMP_CUT: i32 = 480;
/// The egg boost sets the upward speed to this: 2.05 tiles (32.9 px) more.
pub const BOOST_SPEED: i32 = 1320;
/// Upward speed after stomping an enemy.
pub const STOMP_BOUNCE: i32 = 1100;
/// A jump is still allowed this many ticks after walking off an edge.
pub const COYOTE_TICKS: u8 = 4;
/// A stomp counts if the bird's feet were at most this far below the enemy's top last tick.
pub const STOMP_TOLERANCE: i32 = 4 * SUB;

pub const SHOOT_COOLDOWN: u8 = 20;
pub const PEBBLE_SPEED: i32 = 1280;
pub const PEBBLE_LIFETIME: u8 = 48;
pub const PEBBLE_SIZE: i32 = 6 * SUB;
pub const MAX_PEBBLES: usize = 4;

/// Entity speed parameters count in eighths of a pixel per tick.
pub const SPEED_UNIT: i32 = SUB / 8;
pub const WALKER_W: i32 = 14 * SUB;
pub const WALKER_H: i32 = 12 * SUB;
pub const FLYER_SIZE: i32 = 12 * SUB;
pub const ROCK_SIZE: i32 = 12 * SUB;
pub const ROCK_MAX_FALL: i32 = 1536;
pub const ROCKS_PER_SPAWNER: usize = 4;
pub const PLATFORM_H: i32 = 8 * SUB;

/// Height in sub-units reached from upward speed `v` under gravity, with the simulation's
/// order of operations (speed reduced by gravity, then position moved).
pub const fn rise_height(v: i32) -> i32 {
    if v <= GRAVITY {
        return 0;
    }
    let n = v / GRAVITY; // ticks with upward movement
    n * v - GRAVITY * n * (n + 1) / 2
}

/// The smallest launch speed that rises at least `tiles` tiles plus 2 px, so a spring of
/// strength n reaches the top of a wall n tiles high.
pub fn spring_speed(tiles: i32) -> i32 {
    let want = tiles.clamp(0, 64) * TILE + 2 * SUB;
    let (mut lo, mut hi) = (0i32, 20_000i32);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if rise_height(mid) >= want {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}
