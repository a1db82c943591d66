//! `validate_map`: errors (the map cannot be played) and warnings (playable, but probably not
//! what the author meant). Codes are stable; FORMAT.md lists them all.

use super::limits::{MAX_MAP_BYTES, MAX_REPORTED_WARNINGS};
use super::parse::{parse, Diag};
use super::reach::nests_reached;
use crate::sim::palette::{Block, EntityKind, WALKER_RANGE};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub code: &'static str,
    /// 1-based line of the map text.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    pub message: String,
    pub hint: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValidationReport {
    pub valid: bool,
    pub errors: Vec<Issue>,
    pub warnings: Vec<Issue>,
}

impl ValidationReport {
    pub(crate) fn from_errors(mut diag: Diag) -> ValidationReport {
        if diag.capped {
            let line = diag.errors.last().map(|e| e.line).unwrap_or(1);
            diag.errors.push(Issue {
                code: "too_many_errors",
                line,
                column: 1,
                message: "more errors follow; only the first ones are listed".into(),
                hint: "fix these and validate again".into(),
            });
        }
        ValidationReport {
            valid: diag.errors.is_empty(),
            errors: diag.errors,
            warnings: Vec::new(),
        }
    }

    /// The first error as one line, for error messages.
    pub fn summary(&self) -> String {
        match self.errors.first() {
            Some(e) => format!(
                "line {}, column {}: {} ({})",
                e.line, e.column, e.message, e.code
            ),
            None => "the map is valid".into(),
        }
    }
}

/// Validates raw bytes (for files): not UTF-8 or too large is a report, never a panic.
pub fn validate_map_bytes(bytes: &[u8]) -> ValidationReport {
    if bytes.len() > MAX_MAP_BYTES {
        let mut d = Diag::new();
        d.err(
            "too_large",
            1,
            1,
            format!(
                "the map is {} bytes; at most {MAX_MAP_BYTES} bytes (256 KiB) are allowed",
                bytes.len()
            ),
            "make the map smaller",
        );
        return ValidationReport::from_errors(d);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => validate_map(text),
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            let good = std::str::from_utf8(good).unwrap_or("");
            let line = good.matches('\n').count() + 1;
            let column = good
                .rsplit('\n')
                .next()
                .map(|l| l.chars().count())
                .unwrap_or(0)
                + 1;
            let mut d = Diag::new();
            d.err(
                "not_utf8",
                line,
                column,
                format!("byte {} is not valid UTF-8", e.valid_up_to()),
                "save the map as UTF-8 plain text",
            );
            ValidationReport::from_errors(d)
        }
    }
}

/// Every error, and the warnings beside them. With errors, the map the warnings look at is the
/// parser's best effort, so the warnings that would only repeat an error are left out: those
/// that read tiles when the grid has bad rows, those about the start when there is no single
/// start, and `nest_unreachable` (a relaxed check on a map that cannot be played yet).
pub fn validate_map(text: &str) -> ValidationReport {
    let mut diag = Diag::new();
    let parsed = parse(text, &mut diag);
    let mut report = ValidationReport::from_errors(diag);
    let Some(parsed) = parsed else {
        return report;
    };
    let clean = report.errors.is_empty();
    let grid_ok = parsed.grid_ok;
    let map = &parsed.map;
    let mut warn = |code: &'static str, line: usize, message: String, hint: &str| {
        if report.warnings.len() < MAX_REPORTED_WARNINGS {
            report.warnings.push(Issue {
                code,
                line: line as u32,
                column: 1,
                message,
                hint: hint.into(),
            });
        }
    };
    let tile = |x: i32, y: i32| map.tile(x, y).unwrap_or(Block::Empty);
    let ents = map.entities();
    let line_of = |i: usize| parsed.entity_lines.get(i).copied().unwrap_or(1);
    let start_i = ents
        .iter()
        .position(|e| e.kind == EntityKind::Start)
        .unwrap_or(0);
    let one_start = ents.iter().filter(|e| e.kind == EntityKind::Start).count() == 1;
    let (sx, sy) = map.start();

    // Start over a bottomless pit: nothing to land on straight below, no platform or spring.
    let mut ground = false;
    for y in sy..map.height() {
        let b = tile(sx, y);
        if (y > sy && (b.is_solid() || b.is_one_way())) || b == Block::Spikes {
            ground = b != Block::Spikes;
            break;
        }
    }
    let helper_below = ents.iter().any(|e| {
        matches!(e.kind, EntityKind::Platform | EntityKind::Spring)
            && e.y >= sy
            && (e.x - sx).abs() <= 8
    });
    if !ground && !helper_below && one_start && grid_ok {
        warn(
            "start_over_pit",
            line_of(start_i),
            format!("the start ({sx}, {sy}) has no ground below it: the bird falls out of the map or onto spikes"),
            "put a solid block or ledge under the start, or move the start onto ground",
        );
    }
    for (i, e) in ents.iter().enumerate() {
        let name = e.kind.def().name;
        if one_start && e.kind.is_enemy() && (e.x - sx).abs() <= 3 && (e.y - sy).abs() <= 3 {
            warn(
                "enemy_near_start",
                line_of(i),
                format!(
                    "{name} at ({}, {}) is within 3 tiles of the start",
                    e.x, e.y
                ),
                "give the bird room to start: move the enemy at least 4 tiles away",
            );
        }
        if grid_ok && tile(e.x, e.y) == Block::Spikes && e.kind != EntityKind::Platform {
            warn(
                "entity_on_spikes",
                line_of(i),
                format!("{name} at ({}, {}) sits on spikes", e.x, e.y),
                "move it off the spikes tile",
            );
        }
        if grid_ok && e.kind == EntityKind::Walker && e.param(WALKER_RANGE) > 0 {
            let b = tile(e.x, e.y + 1);
            if !(b.is_solid() || b.is_one_way()) {
                warn(
                    "walker_floating",
                    line_of(i),
                    format!(
                        "walker at ({}, {}) has no ground under it and will not move",
                        e.x, e.y
                    ),
                    "put it one row above solid ground (walkers do not fall)",
                );
            }
        }
        if grid_ok && e.kind == EntityKind::Rockfall {
            let b = tile(e.x, e.y + 1);
            if b.is_solid() || b.is_one_way() {
                warn(
                    "rockfall_blocked",
                    line_of(i),
                    format!("rockfall at ({}, {}) has a block right below it; its rocks shatter at once", e.x, e.y),
                    "leave open air below a rock-fall spawner",
                );
            }
        }
        for (j, o) in ents.iter().enumerate().skip(i + 1) {
            if o.x == e.x
                && o.y == e.y
                && o.kind != EntityKind::Platform
                && e.kind != EntityKind::Platform
            {
                warn(
                    "entities_overlap",
                    line_of(j),
                    format!(
                        "{} at ({}, {}) shares its tile with the {name} on line {}",
                        o.kind.def().name,
                        o.x,
                        o.y,
                        line_of(i)
                    ),
                    "give each entity its own tile",
                );
                break;
            }
        }
    }
    if !clean {
        return report;
    }
    let nests: Vec<(usize, (i32, i32))> = ents
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EntityKind::Nest)
        .map(|(i, e)| (i, (e.x, e.y)))
        .collect();
    let tiles: Vec<(i32, i32)> = nests.iter().map(|n| n.1).collect();
    for (&(i, _), reached) in nests.iter().zip(nests_reached(map, &tiles)) {
        let e = &ents[i];
        if !reached {
            warn(
                "nest_unreachable",
                line_of(i),
                format!(
                    "the nest at ({}, {}) looks unreachable: a relaxed check (jumps of 5 tiles up with the egg boost, about 10 across, springs, stomps and platforms, ignoring every danger) does not get there from the start",
                    e.x, e.y
                ),
                "lower the climb, narrow the gaps, add ledges, springs or platforms; playtest_map gives a replay or a proof",
            );
        }
    }
    report
}
