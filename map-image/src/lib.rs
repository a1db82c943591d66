//! A window of a `.map` level: clipped to the map ([`Window::clip`]), rendered as text by the
//! engine's `render_map` and, when asked, drawn as a PNG ([`draw`]) with one colour per
//! symbol of `render_map`'s legend, tiles as filled or patterned squares and entities as
//! shapes over them, so an agent that reads pictures sees what the text shows. [`view`] is
//! both, as the gateway's `render_map` and `horst map render` answer. It uses only
//! horst-engine's public API, and encodes with its own small encoder (`png.rs`).
// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error); tests are
// left out because each test binary sees the dev-dependencies of all of them.
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

pub mod png;

use horst_engine::sim::palette::PLATFORM_WIDTH;
use horst_engine::{parse_map, render_map, Block, EngineError, EntityKind, Map};

/// Pixels per tile side.
pub const TILE_PX: u32 = 12;

/// A window of tiles: columns `x..x+width`, rows `y..y+height` (origin top-left).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

impl Window {
    /// The part of this window inside a `map_width` x `map_height` map, or `None` when the
    /// two do not overlap.
    pub fn clip(self, map_width: i64, map_height: i64) -> Option<Window> {
        let (x0, y0) = (self.x.max(0), self.y.max(0));
        let x1 = self.x.saturating_add(self.width).min(map_width);
        let y1 = self.y.saturating_add(self.height).min(map_height);
        (x0 < x1 && y0 < y1).then_some(Window {
            x: x0,
            y: y0,
            width: x1 - x0,
            height: y1 - y0,
        })
    }

    fn contains(&self, tx: i64, ty: i64) -> bool {
        tx >= self.x && tx < self.x + self.width && ty >= self.y && ty < self.y + self.height
    }
}

/// One symbol of the picture, as `render_map`'s legend names it, with its colour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegendEntry {
    /// The character `render_map` draws.
    pub symbol: char,
    pub name: &'static str,
    /// `#rrggbb`.
    pub colour: String,
}

/// A drawn window.
pub struct Picture {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// What appears in it, in the order of `render_map`'s legend (blocks, then entities).
    pub legend: Vec<LegendEntry>,
}

/// A rendered window.
pub struct View {
    /// `render_map`'s text of the drawn window (a first line says when it was clipped).
    pub text: String,
    pub requested: Window,
    /// What was drawn: the requested window clipped to the map.
    pub window: Window,
    pub clipped: bool,
    pub map_width: i64,
    pub map_height: i64,
    pub picture: Option<Picture>,
}

impl Window {
    fn describe(&self) -> String {
        format!(
            "x {} to {}, y {} to {}",
            self.x,
            self.x.saturating_add(self.width) - 1,
            self.y,
            self.y.saturating_add(self.height) - 1
        )
    }
}

/// Renders `requested` of the map `text`, clipped to the map, with a picture if `image`.
/// Errors are the engine's: an invalid map, a window size outside 1-120 by 1-30, or a window
/// that misses the map entirely.
pub fn view(text: &str, requested: Window, image: bool) -> Result<View, EngineError> {
    let limits = horst_engine::limits();
    let (max_w, max_h) = (limits.render_max_width, limits.render_max_height);
    if !(1..=max_w).contains(&requested.width) || !(1..=max_h).contains(&requested.height) {
        return Err(EngineError::InvalidInput(format!(
            "a window is 1-{max_w} tiles wide and 1-{max_h} high, got {} x {}",
            requested.width, requested.height
        )));
    }
    let map = parse_map(text)
        .map_err(|r| EngineError::InvalidMap(format!("the map is invalid: {}", r.summary())))?;
    let (w, h) = (i64::from(map.width()), i64::from(map.height()));
    let Some(window) = requested.clip(w, h) else {
        return Err(EngineError::InvalidInput(format!(
            "the window {} does not overlap the map, which is {w} x {h} tiles (x 0-{}, y 0-{}); move x and y into it",
            requested.describe(),
            w - 1,
            h - 1
        )));
    };
    let rendered = render_map(text, window.x, window.y, window.width, window.height)?;
    let clipped = window != requested;
    let text = if clipped {
        format!(
            "clipped to the map: asked for {}, drawn {}\n{}",
            requested.describe(),
            window.describe(),
            rendered.text
        )
    } else {
        rendered.text
    };
    Ok(View {
        text,
        requested,
        window,
        clipped,
        map_width: w,
        map_height: h,
        picture: image.then(|| draw(&map, window)),
    })
}

const SKY: u8 = 0;
const OUTLINE: u8 = 1;
/// Palette indexes: sky, outline, then the blocks (without empty), then the entities.
const BLOCK_BASE: u8 = 2;
const ENTITY_BASE: u8 = BLOCK_BASE + Block::ALL.len() as u8 - 1;

fn palette() -> Vec<[u8; 3]> {
    let mut p = vec![[0xBF, 0xE3, 0xF5], [0x20, 0x20, 0x24]];
    p.extend(Block::ALL[1..].iter().map(|&b| block_colour(b)));
    p.extend(EntityKind::ALL.iter().map(|&k| entity_colour(k)));
    p
}

fn block_colour(b: Block) -> [u8; 3] {
    match b {
        Block::Empty => [0xBF, 0xE3, 0xF5],
        Block::Rock => [0x5B, 0x5B, 0x66],
        Block::Grass => [0x3F, 0xA3, 0x3C],
        Block::Earth => [0x8B, 0x5A, 0x2B],
        Block::Ice => [0x5C, 0xC8, 0xE0],
        Block::Snow => [0xFA, 0xFA, 0xFF],
        Block::Ledge => [0xA8, 0x74, 0x40],
        Block::Spikes => [0xD0, 0x30, 0x30],
        Block::Cracked => [0x9A, 0x9A, 0x9A],
        Block::Crumbling => [0xD9, 0xB3, 0x6C],
    }
}

fn entity_colour(k: EntityKind) -> [u8; 3] {
    match k {
        EntityKind::Start => [0xFF, 0xD7, 0x00],
        EntityKind::Nest => [0xFF, 0x7A, 0x00],
        EntityKind::Walker => [0xC0, 0x10, 0x60],
        EntityKind::Flyer => [0x80, 0x30, 0xC0],
        EntityKind::Rockfall => [0x4A, 0x30, 0x20],
        EntityKind::Platform => [0x6E, 0x44, 0x1E],
        EntityKind::Spring => [0x20, 0xC0, 0x70],
        EntityKind::Checkpoint => [0x20, 0x50, 0xE0],
        EntityKind::Collectible => [0xFF, 0x40, 0xFF],
    }
}

fn block_index(b: Block) -> u8 {
    match Block::ALL.iter().position(|&a| a == b) {
        Some(0) | None => SKY,
        Some(i) => BLOCK_BASE + i as u8 - 1,
    }
}

fn entity_index(k: EntityKind) -> u8 {
    ENTITY_BASE + EntityKind::ALL.iter().position(|&a| a == k).unwrap_or(0) as u8
}

fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The pixels of one tile: `paint(px, py)` for each pixel of the tile, `None` keeps it.
struct Canvas {
    width: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    fn tile(&mut self, col: usize, row: usize, paint: impl Fn(u32, u32) -> Option<u8>) {
        let s = TILE_PX as usize;
        for py in 0..s {
            for px in 0..s {
                if let Some(c) = paint(px as u32, py as u32) {
                    self.pixels[(row * s + py) * self.width + col * s + px] = c;
                }
            }
        }
    }
}

/// How a block fills its tile (12 x 12 pixels).
fn block_pixel(b: Block, px: u32, py: u32) -> Option<u8> {
    let s = TILE_PX;
    let own = block_index(b);
    match b {
        Block::Empty => None,
        Block::Grass => Some(if py < 4 {
            own
        } else {
            block_index(Block::Earth)
        }),
        Block::Snow => Some(if py == s - 1 { OUTLINE } else { own }),
        // One-way: a board along the top of the tile.
        Block::Ledge => (py < 3).then_some(own),
        // Two teeth pointing up.
        Block::Spikes => {
            let half = s / 2;
            let dx = (px % half).abs_diff(half / 2);
            (py >= s / 3 && dx * 2 <= py - s / 3).then_some(own)
        }
        Block::Cracked => Some(if px == py || px + 1 == py {
            OUTLINE
        } else {
            own
        }),
        // Crumbling: dotted with holes.
        Block::Crumbling => Some(if px % 4 == 1 && py % 4 == 1 { SKY } else { own }),
        Block::Rock | Block::Earth | Block::Ice => Some(own),
    }
}

/// How an entity is drawn over its tile.
fn entity_pixel(k: EntityKind, px: u32, py: u32) -> Option<u8> {
    let s = TILE_PX as i64;
    let own = entity_index(k);
    let (x, y) = (px as i64 * 2 + 1 - s, py as i64 * 2 + 1 - s); // centred, doubled
    let r2 = x * x + y * y;
    let r = s - 2; // doubled radius
    match k {
        EntityKind::Start => (r2 <= r * r).then(|| {
            if r2 >= (r - 2) * (r - 2) {
                OUTLINE
            } else {
                own
            }
        }),
        EntityKind::Nest => (r2 <= r * r && r2 >= (r - 5) * (r - 5)).then_some(own),
        EntityKind::Walker => (px >= 2 && px < s as u32 - 2 && py >= 3).then_some({
            if py == 5 && (px == 4 || px == 7) {
                OUTLINE
            } else {
                own
            }
        }),
        EntityKind::Flyer => (x.abs() + y.abs() <= r).then_some(own),
        EntityKind::Rockfall => {
            let top = py as i64 * 2;
            (x.abs() <= s - top).then_some(own)
        }
        EntityKind::Platform => (4..8).contains(&py).then_some(own),
        EntityKind::Spring => {
            (py >= s as u32 / 2 && (!py.is_multiple_of(3) || px % 6 < 3)).then_some(own)
        }
        EntityKind::Checkpoint => {
            let pole = px == 3;
            let flag = (4..10).contains(&px) && (1..5).contains(&py);
            (pole || flag).then_some(if pole { OUTLINE } else { own })
        }
        EntityKind::Collectible => (r2 <= (r / 2) * (r / 2)).then_some(own),
    }
}

/// Draws `window` (already clipped to the map) of `map`.
pub fn draw(map: &Map, window: Window) -> Picture {
    let (cols, rows) = (window.width.max(0) as usize, window.height.max(0) as usize);
    let s = TILE_PX as usize;
    let mut canvas = Canvas {
        width: cols * s,
        pixels: vec![SKY; cols * s * rows * s],
    };
    let mut blocks_seen = [false; Block::ALL.len()];
    let mut entities_seen = [false; EntityKind::ALL.len()];
    for row in 0..rows {
        for col in 0..cols {
            let (tx, ty) = (window.x + col as i64, window.y + row as i64);
            let b = map.tile(tx as i32, ty as i32).unwrap_or(Block::Empty);
            if let Some(i) = Block::ALL.iter().position(|&a| a == b) {
                blocks_seen[i] = true;
            }
            canvas.tile(col, row, |px, py| block_pixel(b, px, py));
        }
    }
    // Entities over tiles; start and nests last, as render_map draws them.
    let rank = |k: EntityKind| match k {
        EntityKind::Start => 2,
        EntityKind::Nest => 1,
        _ => 0,
    };
    let mut entities: Vec<_> = map.entities().iter().collect();
    entities.sort_by_key(|e| rank(e.kind));
    for e in entities {
        let span = if e.kind == EntityKind::Platform {
            e.param(PLATFORM_WIDTH).max(1)
        } else {
            1
        };
        for dx in 0..span {
            let (tx, ty) = (i64::from(e.x) + dx, i64::from(e.y));
            if window.contains(tx, ty) {
                let (col, row) = ((tx - window.x) as usize, (ty - window.y) as usize);
                canvas.tile(col, row, |px, py| entity_pixel(e.kind, px, py));
                if let Some(i) = EntityKind::ALL.iter().position(|&a| a == e.kind) {
                    entities_seen[i] = true;
                }
            }
        }
    }
    let mut legend = Vec::new();
    for (i, &b) in Block::ALL.iter().enumerate() {
        if blocks_seen[i] {
            legend.push(LegendEntry {
                symbol: b.key(),
                name: b.def().name,
                colour: hex(block_colour(b)),
            });
        }
    }
    for (i, &k) in EntityKind::ALL.iter().enumerate() {
        if entities_seen[i] {
            legend.push(LegendEntry {
                symbol: k.def().glyph,
                name: k.def().name,
                colour: hex(entity_colour(k)),
            });
        }
    }
    let (width, height) = ((cols * s) as u32, (rows * s) as u32);
    let palette = palette();
    let png = png::encode(&png::Indexed {
        width,
        height,
        palette: &palette,
        pixels: &canvas.pixels,
    });
    Picture {
        png,
        width,
        height,
        legend,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_clipped_to_the_map() {
        let w = |x, y, width, height| Window {
            x,
            y,
            width,
            height,
        };
        assert_eq!(w(0, 0, 10, 5).clip(40, 20), Some(w(0, 0, 10, 5)));
        assert_eq!(w(-5, -2, 10, 5).clip(40, 20), Some(w(0, 0, 5, 3)));
        assert_eq!(w(35, 18, 10, 5).clip(40, 20), Some(w(35, 18, 5, 2)));
        assert_eq!(w(39, 19, 120, 30).clip(40, 20), Some(w(39, 19, 1, 1)));
        assert_eq!(w(40, 0, 10, 5).clip(40, 20), None);
        assert_eq!(w(-10, 0, 10, 5).clip(40, 20), None);
        assert_eq!(w(0, 20, 10, 5).clip(40, 20), None);
        assert_eq!(w(i64::MAX, 0, 10, 5).clip(40, 20), None);
    }

    const MAP: &str = "gcv-map 1\nname: T\nsize: 8 4\ngrid:\n........\n........\n........\nGGGGGGGG\nentities:\nstart 1 2\nnest 6 2\n";

    #[test]
    fn a_view_says_when_it_was_clipped() {
        let w = |x, y, width, height| Window {
            x,
            y,
            width,
            height,
        };
        let v = view(MAP, w(0, 0, 8, 4), false).unwrap();
        assert!(!v.clipped && v.window == w(0, 0, 8, 4) && v.picture.is_none());
        assert!(
            v.text.starts_with("T: 8 x 4 tiles; showing x 0-7, y 0-3"),
            "{}",
            v.text
        );
        let v = view(MAP, w(-3, 2, 120, 30), true).unwrap();
        assert!(v.clipped);
        assert_eq!(v.window, w(0, 2, 8, 2));
        assert!(
            v.text.starts_with("clipped to the map: asked for x -3 to 116, y 2 to 31, drawn x 0 to 7, y 2 to 3\nT: 8 x 4 tiles; showing x 0-7, y 2-3"),
            "{}",
            v.text
        );
        let p = v.picture.unwrap();
        assert_eq!((p.width, p.height), (8 * TILE_PX, 2 * TILE_PX));
        let miss = view(MAP, w(8, 0, 5, 5), false).err().unwrap();
        assert_eq!(miss.code(), "invalid_input");
        assert!(
            miss.message()
                .contains("does not overlap the map, which is 8 x 4 tiles (x 0-7, y 0-3)"),
            "{}",
            miss.message()
        );
        assert_eq!(
            view(MAP, w(0, 0, 121, 5), false).err().unwrap().code(),
            "invalid_input"
        );
        assert_eq!(
            view("nope", w(0, 0, 5, 5), false).err().unwrap().code(),
            "validation_failed"
        );
    }

    #[test]
    fn every_symbol_has_its_own_colour() {
        let p = palette();
        let mut sorted = p.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), p.len(), "colours repeat: {p:?}");
        assert!(p.len() <= 256);
    }
}
