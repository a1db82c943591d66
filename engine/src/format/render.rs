//! `render_map`: a window of the map as text, for authors who cannot see pictures.

use super::limits::{MAX_MAP_BYTES, RENDER_MAX_HEIGHT, RENDER_MAX_WIDTH};
use super::parse::parse_map;
use crate::sim::palette::{Block, EntityKind, BLOCKS, ENTITIES, PLATFORM_WIDTH};
use crate::EngineError;
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rendered {
    pub text: String,
}

/// Renders tiles `x..x+width`, `y..y+height` (clipped to the map), entities drawn over tiles
/// with their glyphs, a ruler of column and row numbers, and a legend of the characters shown.
pub fn render_map(
    text: &str,
    x: i64,
    y: i64,
    width: i64,
    height: i64,
) -> Result<Rendered, EngineError> {
    if !(1..=RENDER_MAX_WIDTH).contains(&width) {
        return Err(EngineError::InvalidInput(format!(
            "width must be an integer 1-{RENDER_MAX_WIDTH}, got {width}"
        )));
    }
    if !(1..=RENDER_MAX_HEIGHT).contains(&height) {
        return Err(EngineError::InvalidInput(format!(
            "height must be an integer 1-{RENDER_MAX_HEIGHT}, got {height}"
        )));
    }
    if text.len() > MAX_MAP_BYTES {
        return Err(EngineError::TooLarge(format!(
            "map is {} bytes; at most {MAX_MAP_BYTES} bytes are allowed",
            text.len()
        )));
    }
    let map = parse_map(text)
        .map_err(|r| EngineError::InvalidMap(format!("the map is invalid: {}", r.summary())))?;
    let (w, h) = (map.width() as i64, map.height() as i64);
    if x < 0 || x >= w {
        return Err(EngineError::InvalidInput(format!(
            "x must be an integer 0-{}, got {x}",
            w - 1
        )));
    }
    if y < 0 || y >= h {
        return Err(EngineError::InvalidInput(format!(
            "y must be an integer 0-{}, got {y}",
            h - 1
        )));
    }
    let x1 = (x + width).min(w);
    let y1 = (y + height).min(h);
    let cols = (x1 - x) as usize;
    let mut grid: Vec<Vec<char>> = (y..y1)
        .map(|ty| {
            (x..x1)
                .map(|tx| map.tile(tx as i32, ty as i32).unwrap_or(Block::Empty).key())
                .collect()
        })
        .collect();
    // Entities over tiles; start and nests last so they are never hidden.
    let rank = |k: EntityKind| match k {
        EntityKind::Start => 2,
        EntityKind::Nest => 1,
        _ => 0,
    };
    let mut ents: Vec<_> = map.entities().iter().collect();
    ents.sort_by_key(|e| rank(e.kind));
    for e in ents {
        let span = if e.kind == EntityKind::Platform {
            e.param(PLATFORM_WIDTH)
        } else {
            1
        };
        for dx in 0..span {
            let (tx, ty) = (e.x as i64 + dx, e.y as i64);
            if tx >= x && tx < x1 && ty >= y && ty < y1 {
                grid[(ty - y) as usize][(tx - x) as usize] = e.kind.def().glyph;
            }
        }
    }
    let label = (y1 - 1).to_string().len().max(2);
    let mut out = format!(
        "{}: {} x {} tiles; showing x {}-{}, y {}-{} (origin top-left)\n",
        map.name(),
        w,
        h,
        x,
        x1 - 1,
        y,
        y1 - 1
    );
    let pad = " ".repeat(label + 1);
    if x1 > 100 {
        out.push_str(&pad);
        out.extend((x..x1).map(|c| {
            if c >= 100 {
                char::from(b'0' + ((c / 100) % 10) as u8)
            } else {
                ' '
            }
        }));
        out.push('\n');
    }
    if x1 > 10 {
        out.push_str(&pad);
        out.extend((x..x1).map(|c| {
            if c >= 10 {
                char::from(b'0' + ((c / 10) % 10) as u8)
            } else {
                ' '
            }
        }));
        out.push('\n');
    }
    out.push_str(&pad);
    out.extend((x..x1).map(|c| char::from(b'0' + (c % 10) as u8)));
    out.push('\n');
    let mut shown: Vec<char> = Vec::new();
    for (i, row) in grid.iter().enumerate() {
        out.push_str(&format!("{:>label$} ", y + i as i64));
        for &c in row {
            out.push(c);
            if !shown.contains(&c) {
                shown.push(c);
            }
        }
        out.push('\n');
    }
    let _ = cols;
    out.push_str("legend:\n");
    for b in BLOCKS.iter() {
        if shown.contains(&b.key) {
            out.push_str(&format!("  {} {} ({})\n", b.key, b.name, b.german));
        }
    }
    for e in ENTITIES.iter() {
        if shown.contains(&e.glyph) {
            out.push_str(&format!("  {} {} ({})\n", e.glyph, e.name, e.german));
        }
    }
    Ok(Rendered { text: out })
}
