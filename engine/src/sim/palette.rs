//! The palette: every block and entity, with the parameters the simulation reads.
//!
//! `list_palette`, the parser and the simulation all read these tables, so a block or a
//! parameter cannot exist in one place and be missing in another. Numeric ids and keys are
//! stable: replays and stored maps depend on them, so never renumber, only append.

/// A tile of the grid. The discriminant is the block's stable numeric id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Block {
    Empty = 0,
    Rock = 1,
    Grass = 2,
    Earth = 3,
    Ice = 4,
    Snow = 5,
    Ledge = 6,
    Spikes = 7,
    Cracked = 8,
    Crumbling = 9,
}

impl Block {
    pub const ALL: [Block; 10] = [
        Block::Empty,
        Block::Rock,
        Block::Grass,
        Block::Earth,
        Block::Ice,
        Block::Snow,
        Block::Ledge,
        Block::Spikes,
        Block::Cracked,
        Block::Crumbling,
    ];

    pub fn from_id(id: u8) -> Option<Block> {
        Block::ALL.get(id as usize).copied()
    }

    pub fn from_key(c: char) -> Option<Block> {
        BLOCKS.iter().find(|b| b.key == c).map(|b| b.block)
    }

    pub fn def(self) -> &'static BlockDef {
        &BLOCKS[self as usize]
    }

    pub fn key(self) -> char {
        self.def().key
    }

    /// Blocks the bird from every side (while intact).
    pub fn is_solid(self) -> bool {
        matches!(
            self,
            Block::Rock | Block::Grass | Block::Earth | Block::Ice | Block::Snow | Block::Cracked
        )
    }

    /// Carries the bird when it lands from above; it passes through from below and the sides.
    pub fn is_one_way(self) -> bool {
        matches!(self, Block::Ledge | Block::Crumbling)
    }
}

/// How a parameter's value is written and checked.
#[derive(Clone, Copy, Debug)]
pub enum ParamType {
    /// An integer in `min..=max`.
    Int { min: i64, max: i64 },
    /// One of the listed words; the stored value is the word's index.
    Enum(&'static [&'static str]),
}

#[derive(Clone, Copy, Debug)]
pub struct ParamDef {
    pub name: &'static str,
    pub ty: ParamType,
    /// The default as stored (for an enum: the index of the word).
    pub default: i64,
    pub unit: &'static str,
    pub doc: &'static str,
}

impl ParamDef {
    pub fn in_range(&self, v: i64) -> bool {
        match self.ty {
            ParamType::Int { min, max } => v >= min && v <= max,
            ParamType::Enum(words) => v >= 0 && (v as usize) < words.len(),
        }
    }

    /// The value as written in a map file.
    pub fn format_value(&self, v: i64) -> String {
        match self.ty {
            ParamType::Int { .. } => v.to_string(),
            ParamType::Enum(words) => words
                .get(v as usize)
                .map(|w| (*w).to_string())
                .unwrap_or_else(|| v.to_string()),
        }
    }

    pub fn range_text(&self) -> String {
        match self.ty {
            ParamType::Int { min, max } => format!("an integer {min} to {max}"),
            ParamType::Enum(words) => format!("one of {}", words.join(", ")),
        }
    }
}

pub struct BlockDef {
    pub block: Block,
    pub key: char,
    pub id: u8,
    pub name: &'static str,
    pub german: &'static str,
    /// `none`, `solid`, `one-way` or `hazard`.
    pub collision: &'static str,
    pub doc: &'static str,
    /// Map-wide parameters, set with a `default:` header line.
    pub params: &'static [ParamDef],
}

pub const CRUMBLE_DELAY: ParamDef = ParamDef {
    name: "delay",
    ty: ParamType::Int { min: 1, max: 600 },
    default: 30,
    unit: "ticks",
    doc: "ticks between the bird first standing on a crumbling ledge and the ledge falling away",
};

pub static BLOCKS: [BlockDef; 10] = [
    BlockDef {
        block: Block::Empty,
        key: '.',
        id: 0,
        name: "empty",
        german: "Luft",
        collision: "none",
        doc: "Open air.",
        params: &[],
    },
    BlockDef {
        block: Block::Rock,
        key: '#',
        id: 1,
        name: "rock",
        german: "Fels",
        collision: "solid",
        doc: "Solid from every side.",
        params: &[],
    },
    BlockDef {
        block: Block::Grass,
        key: 'G',
        id: 2,
        name: "grass",
        german: "Gras",
        collision: "solid",
        doc: "Solid ground with normal grip.",
        params: &[],
    },
    BlockDef {
        block: Block::Earth,
        key: 'E',
        id: 3,
        name: "earth",
        german: "Erde",
        collision: "solid",
        doc: "Solid ground with normal grip (looks like earth).",
        params: &[],
    },
    BlockDef {
        block: Block::Ice,
        key: 'I',
        id: 4,
        name: "ice",
        german: "Eis",
        collision: "solid",
        doc: "Solid and slippery: the bird speeds up and slows down slowly while standing on it.",
        params: &[],
    },
    BlockDef {
        block: Block::Snow,
        key: 'S',
        id: 5,
        name: "snow",
        german: "Schnee",
        collision: "solid",
        doc: "Solid and deep: while standing on it the bird walks at half speed.",
        params: &[],
    },
    BlockDef {
        block: Block::Ledge,
        key: '-',
        id: 6,
        name: "ledge",
        german: "Vorsprung",
        collision: "one-way",
        doc: "A one-way ledge: solid only when landing on it from above; jump up through it.",
        params: &[],
    },
    BlockDef {
        block: Block::Spikes,
        key: '^',
        id: 7,
        name: "spikes",
        german: "Stacheln",
        collision: "hazard",
        doc: "Deadly. Not solid; touching the spikes (the lower 10 px of the tile, 2 px in from each side) kills.",
        params: &[],
    },
    BlockDef {
        block: Block::Cracked,
        key: 'C',
        id: 8,
        name: "cracked",
        german: "Rissiger Fels",
        collision: "solid",
        doc: "Cracked rock: solid until a pebble hits it, then gone for the rest of the run.",
        params: &[],
    },
    BlockDef {
        block: Block::Crumbling,
        key: '~',
        id: 9,
        name: "crumbling",
        german: "Bröckelkante",
        collision: "one-way",
        doc: "A crumbling ledge: one-way like a ledge, falls away `delay` ticks after the bird first stands on it and does not come back.",
        params: &[CRUMBLE_DELAY],
    },
];

/// An entity kind. The discriminant is the entity's stable numeric id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum EntityKind {
    Start = 100,
    Nest = 101,
    Walker = 102,
    Flyer = 103,
    Rockfall = 104,
    Platform = 105,
    Spring = 106,
    Checkpoint = 107,
    Collectible = 108,
}

impl EntityKind {
    pub const ALL: [EntityKind; 9] = [
        EntityKind::Start,
        EntityKind::Nest,
        EntityKind::Walker,
        EntityKind::Flyer,
        EntityKind::Rockfall,
        EntityKind::Platform,
        EntityKind::Spring,
        EntityKind::Checkpoint,
        EntityKind::Collectible,
    ];

    pub fn def(self) -> &'static EntityDef {
        &ENTITIES[(self as u8 - 100) as usize]
    }

    pub fn from_name(name: &str) -> Option<EntityKind> {
        ENTITIES.iter().find(|e| e.name == name).map(|e| e.kind)
    }

    pub fn is_enemy(self) -> bool {
        matches!(self, EntityKind::Walker | EntityKind::Flyer)
    }
}

pub struct EntityDef {
    pub kind: EntityKind,
    pub id: u8,
    pub name: &'static str,
    pub german: &'static str,
    /// The character `render_map` draws for it.
    pub glyph: char,
    pub doc: &'static str,
    pub params: &'static [ParamDef],
}

// Parameter indices, in the order of each entity's `params` table.
pub const WALKER_RANGE: usize = 0;
pub const WALKER_SPEED: usize = 1;
pub const WALKER_PAUSE: usize = 2;
pub const WALKER_DIR: usize = 3;
pub const FLYER_AXIS: usize = 0;
pub const FLYER_RANGE: usize = 1;
pub const FLYER_SPEED: usize = 2;
pub const FLYER_PAUSE: usize = 3;
pub const ROCKFALL_INTERVAL: usize = 0;
pub const ROCKFALL_JITTER: usize = 1;
pub const ROCKFALL_OFFSET: usize = 2;
pub const PLATFORM_DX: usize = 0;
pub const PLATFORM_DY: usize = 1;
pub const PLATFORM_SPEED: usize = 2;
pub const PLATFORM_WIDTH: usize = 3;
pub const SPRING_STRENGTH: usize = 0;

const SPEED_DOC: &str = "speed in eighths of a pixel per tick (4 = 0.5 px/tick = 1.9 tiles/s)";

pub static ENTITIES: [EntityDef; 9] = [
    EntityDef {
        kind: EntityKind::Start,
        id: 100,
        name: "start",
        german: "Start",
        glyph: '@',
        doc: "Where the bird starts, standing on the bottom of this tile. Exactly one.",
        params: &[],
    },
    EntityDef {
        kind: EntityKind::Nest,
        id: 101,
        name: "nest",
        german: "Nest",
        glyph: '*',
        doc: "The goal: touching any part of this tile wins. At least one.",
        params: &[],
    },
    EntityDef {
        kind: EntityKind::Walker,
        id: 102,
        name: "walker",
        german: "Murmeltier",
        glyph: 'w',
        doc: "A marmot patrolling its row between x-range and x+range. It turns at the ends, at walls and at edges, pausing a random 0..=pause ticks (from the seed) at each turn. Stomp it from above or shoot it; touching it otherwise kills.",
        params: &[
            ParamDef {
                name: "range",
                ty: ParamType::Int { min: 0, max: 64 },
                default: 3,
                unit: "tiles",
                doc: "patrol distance either side of its tile",
            },
            ParamDef {
                name: "speed",
                ty: ParamType::Int { min: 1, max: 16 },
                default: 4,
                unit: "1/8 px per tick",
                doc: SPEED_DOC,
            },
            ParamDef {
                name: "pause",
                ty: ParamType::Int { min: 0, max: 600 },
                default: 30,
                unit: "ticks",
                doc: "longest random pause at each turn",
            },
            ParamDef {
                name: "dir",
                ty: ParamType::Enum(&["left", "right"]),
                default: 0,
                unit: "",
                doc: "direction it starts walking",
            },
        ],
    },
    EntityDef {
        kind: EntityKind::Flyer,
        id: 103,
        name: "flyer",
        german: "Dohle",
        glyph: 'f',
        doc: "A jackdaw flying back and forth along one axis between -range and +range tiles from its tile, through walls, pausing a random 0..=pause ticks (from the seed) at each end. It starts moving towards +x (axis h) or up (axis v). Stomp it or shoot it; touching it otherwise kills.",
        params: &[
            ParamDef {
                name: "axis",
                ty: ParamType::Enum(&["h", "v"]),
                default: 1,
                unit: "",
                doc: "h: horizontal, v: vertical",
            },
            ParamDef {
                name: "range",
                ty: ParamType::Int { min: 0, max: 32 },
                default: 2,
                unit: "tiles",
                doc: "flight distance either side of its tile",
            },
            ParamDef {
                name: "speed",
                ty: ParamType::Int { min: 1, max: 16 },
                default: 4,
                unit: "1/8 px per tick",
                doc: SPEED_DOC,
            },
            ParamDef {
                name: "pause",
                ty: ParamType::Int { min: 0, max: 600 },
                default: 20,
                unit: "ticks",
                doc: "longest random pause at each end",
            },
        ],
    },
    EntityDef {
        kind: EntityKind::Rockfall,
        id: 104,
        name: "rockfall",
        german: "Steinschlag",
        glyph: 'r',
        doc: "Drops a rock from its tile every interval + random(0..=jitter) ticks (from the seed); the first after offset + random(0..=jitter). Rocks fall with gravity, shatter on the first solid or one-way tile and kill the bird on contact. At most 4 rocks per spawner in flight. A pebble shatters a rock.",
        params: &[
            ParamDef {
                name: "interval",
                ty: ParamType::Int { min: 30, max: 1200 },
                default: 120,
                unit: "ticks",
                doc: "base time between rocks",
            },
            ParamDef {
                name: "jitter",
                ty: ParamType::Int { min: 0, max: 600 },
                default: 30,
                unit: "ticks",
                doc: "random extra time added to each wait",
            },
            ParamDef {
                name: "offset",
                ty: ParamType::Int { min: 0, max: 1200 },
                default: 0,
                unit: "ticks",
                doc: "base time before the first rock",
            },
        ],
    },
    EntityDef {
        kind: EntityKind::Platform,
        id: 105,
        name: "platform",
        german: "Schwebeplattform",
        glyph: '=',
        doc: "A moving platform `width` tiles wide and 8 px thick, its top at the top of its tile. It moves back and forth in a straight line between its tile and (x+dx, y+dy), one-way (land on it from above) and carries the bird standing on it.",
        params: &[
            ParamDef {
                name: "dx",
                ty: ParamType::Int { min: -32, max: 32 },
                default: 4,
                unit: "tiles",
                doc: "horizontal travel",
            },
            ParamDef {
                name: "dy",
                ty: ParamType::Int { min: -32, max: 32 },
                default: 0,
                unit: "tiles",
                doc: "vertical travel (negative is up)",
            },
            ParamDef {
                name: "speed",
                ty: ParamType::Int { min: 1, max: 16 },
                default: 4,
                unit: "1/8 px per tick",
                doc: SPEED_DOC,
            },
            ParamDef {
                name: "width",
                ty: ParamType::Int { min: 1, max: 8 },
                default: 3,
                unit: "tiles",
                doc: "width in tiles, extending to the right of x",
            },
        ],
    },
    EntityDef {
        kind: EntityKind::Spring,
        id: 106,
        name: "spring",
        german: "Sprungfeder",
        glyph: 's',
        doc: "A spring in the lower half of its tile. Touching it while not rising launches the bird `strength` tiles high (jump release does not cut it) and restores the egg boost.",
        params: &[ParamDef {
            name: "strength",
            ty: ParamType::Int { min: 2, max: 12 },
            default: 5,
            unit: "tiles",
            doc: "launch height",
        }],
    },
    EntityDef {
        kind: EntityKind::Checkpoint,
        id: 107,
        name: "checkpoint",
        german: "Rastplatz",
        glyph: 'k',
        doc: "A resting place. Touching it records it as the last checkpoint (part of the state). In the referee a death still ends the run; the game client respawns human players there.",
        params: &[],
    },
    EntityDef {
        kind: EntityKind::Collectible,
        id: 108,
        name: "collectible",
        german: "Beere",
        glyph: 'o',
        doc: "A berry. Touching it collects it (counted in the state); it does not affect winning.",
        params: &[],
    },
];
