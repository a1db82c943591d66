//! The `.map` parser. It never panics and never stops at the first problem when it can go on:
//! an author (often a language model) fixes a map faster when it sees every error at once.

use super::limits::*;
use super::validate::{Issue, ValidationReport};
use crate::sim::map::{Entity, Map};
use crate::sim::palette::{
    Block, EntityKind, ParamDef, ParamType, BLOCKS, CRUMBLE_DELAY, ENTITIES,
};

pub const HEADER: &str = "gcv-map";

/// Collects errors, capped so a hopeless file gives a short report.
pub(crate) struct Diag {
    pub errors: Vec<Issue>,
    pub capped: bool,
}

impl Diag {
    pub fn new() -> Diag {
        Diag {
            errors: Vec::new(),
            capped: false,
        }
    }
    pub fn err(
        &mut self,
        code: &'static str,
        line: usize,
        column: usize,
        message: String,
        hint: impl Into<String>,
    ) {
        if self.errors.len() >= MAX_REPORTED_ERRORS {
            self.capped = true;
            return;
        }
        self.errors.push(Issue {
            code,
            line: line as u32,
            column: column as u32,
            message,
            hint: hint.into(),
        });
    }
}

/// What the parser knows beyond the map itself: where things were written. With errors in
/// the diagnostics the map is a best effort (bad rows read as empty, bad entities left out),
/// good enough for the warnings that do not depend on what is broken.
pub(crate) struct Parsed {
    pub map: Map,
    pub entity_lines: Vec<usize>,
    /// Every grid row was read as written (no ragged, unknown, missing or overlong rows).
    pub grid_ok: bool,
}

/// `n` and the noun in the number it needs: `1 tile`, `2 tiles`.
pub(crate) fn count_of(n: impl Into<i64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Parses and checks a map. `Err` carries every error found (warnings are not computed here;
/// `validate_map` adds them).
pub fn parse_map(text: &str) -> Result<Map, ValidationReport> {
    let mut diag = Diag::new();
    match parse(text, &mut diag) {
        Some(p) if diag.errors.is_empty() => Ok(p.map),
        _ => Err(ValidationReport::from_errors(diag)),
    }
}

fn kinds_list() -> String {
    ENTITIES
        .iter()
        .map(|e| e.name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn keys_list() -> String {
    BLOCKS
        .iter()
        .map(|b| format!("'{}' {}", b.key, b.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whitespace-separated tokens with their 1-based character columns.
fn tokens(s: &str, first_col: usize) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, col)
    for (col, (i, c)) in (first_col..).zip(s.char_indices()) {
        if c.is_whitespace() {
            if let Some((b, sc)) = start.take() {
                out.push((sc, &s[b..i]));
            }
        } else if start.is_none() {
            start = Some((i, col));
        }
    }
    if let Some((b, sc)) = start {
        out.push((sc, &s[b..]));
    }
    out
}

/// Cuts an inline `#` comment off a line outside the grid (all but the `name:` value).
fn strip_comment(s: &str) -> &str {
    match s.find('#') {
        Some(i) => s[..i].trim_end(),
        None => s,
    }
}

fn parse_int(s: &str) -> Option<i64> {
    if s.is_empty() || s.len() > 12 {
        return None;
    }
    s.parse::<i64>().ok()
}

/// Parses `name=value` tokens for a kind's parameters into `values` (pre-filled with defaults).
fn parse_params(
    diag: &mut Diag,
    line: usize,
    kind_name: &str,
    defs: &'static [ParamDef],
    toks: &[(usize, &str)],
    values: &mut [i64],
) {
    let mut seen = vec![false; defs.len()];
    for &(col, tok) in toks {
        let Some((k, v)) = tok.split_once('=') else {
            diag.err(
                "bad_parameter",
                line,
                col,
                format!("`{tok}` is not a parameter; parameters are written name=value"),
                format!("write e.g. `{}`", example_param(defs)),
            );
            continue;
        };
        let Some(i) = defs.iter().position(|d| d.name == k) else {
            let known = if defs.is_empty() {
                format!("{kind_name} takes no parameters; remove `{tok}`")
            } else {
                format!(
                    "{kind_name} takes: {}",
                    defs.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
                )
            };
            diag.err(
                "unknown_parameter",
                line,
                col,
                format!("{kind_name} has no parameter `{k}`"),
                known,
            );
            continue;
        };
        let def = &defs[i];
        if seen[i] {
            diag.err(
                "duplicate_parameter",
                line,
                col,
                format!("parameter `{k}` is given twice"),
                "keep one of them",
            );
            continue;
        }
        seen[i] = true;
        let vcol = col + k.chars().count() + 1;
        let value = match def.ty {
            ParamType::Int { .. } => parse_int(v),
            ParamType::Enum(words) => words.iter().position(|w| *w == v).map(|p| p as i64),
        };
        match value {
            Some(x) if def.in_range(x) => values[i] = x,
            _ => diag.err(
                if value.is_none() && matches!(def.ty, ParamType::Int { .. }) {
                    "bad_parameter_value"
                } else {
                    "parameter_out_of_range"
                },
                line,
                vcol,
                format!("{kind_name} {k}={v}: {k} must be {}", def.range_text()),
                format!(
                    "use {}; the default is {} ({})",
                    def.range_text(),
                    def.format_value(def.default),
                    def.unit
                ),
            ),
        }
    }
}

fn example_param(defs: &[ParamDef]) -> String {
    match defs.first() {
        Some(d) => format!("{}={}", d.name, d.format_value(d.default)),
        None => "range=3".to_string(),
    }
}

#[derive(PartialEq)]
enum Section {
    Start,
    Header,
    Grid,
    /// Grid rows after a `size:` line that was wrong (its error says so): skipped unchecked.
    GridUnsized,
    AfterGrid,
    Entities,
}

pub(crate) fn parse(text: &str, diag: &mut Diag) -> Option<Parsed> {
    if text.len() > MAX_MAP_BYTES {
        diag.err(
            "too_large",
            1,
            1,
            format!(
                "the map is {} bytes; at most {MAX_MAP_BYTES} bytes (256 KiB) of UTF-8 are allowed",
                text.len()
            ),
            "make the map smaller (at most 512 x 128 tiles fit easily)",
        );
        return None;
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        diag.err(
            "empty_map",
            1,
            1,
            "the map is empty".into(),
            "start with the line `gcv-map 1`; see the full example in the format reference",
        );
        return None;
    }
    for (ln, line) in text.split('\n').enumerate() {
        for (col, (i, c)) in line.char_indices().enumerate() {
            // A carriage return belongs to a line ending: only whitespace may follow it before
            // the line feed. Lines ended by a CR alone would read as one line.
            if c == '\r' && !line[i + 1..].trim().is_empty() {
                diag.err(
                    "binary_content",
                    ln + 1,
                    col + 1,
                    "a carriage return (CR) without a line feed: lines must end with \\n or \\r\\n, not \\r alone".into(),
                    "save the map with \\n (Unix) or \\r\\n (Windows) line endings",
                );
                return None;
            }
            if c.is_control() && c != '\r' && c != '\t' {
                diag.err(
                    "binary_content",
                    ln + 1,
                    col + 1,
                    format!(
                        "control character U+{:04X}: this does not look like a text map",
                        c as u32
                    ),
                    "a map is plain UTF-8 text; remove control characters",
                );
                return None;
            }
        }
    }

    let mut section = Section::Start;
    let mut name: Option<String> = None;
    let mut size: Option<(i64, i64)> = None;
    let mut size_line = 0usize;
    let mut defaults: Vec<Vec<i64>> = ENTITIES
        .iter()
        .map(|e| e.params.iter().map(|p| p.default).collect())
        .collect();
    let mut crumble = [CRUMBLE_DELAY.default];
    let mut tiles: Vec<Block> = Vec::new();
    let mut rows_read = 0i64;
    let mut grid_line = 0usize;
    let mut entities: Vec<Entity> = Vec::new();
    let mut entity_lines: Vec<usize> = Vec::new();
    let mut entities_line = 0usize;
    let mut grid_ok = true;
    // Grid rows with a problem of their own: entity checks against their tiles would only
    // repeat it.
    let mut bad_rows: Vec<i64> = Vec::new();
    // Every entity kind written, also on lines left out for bad coordinates or bounds: a nest
    // outside the map is that error, not also `no_nest`.
    let mut kinds_written: Vec<EntityKind> = Vec::new();
    // Where `too_many_entities` is in the errors, to say the count in it once all are read.
    let mut over_limit: Option<usize> = None;
    let mut last_line = 1usize;

    // A final newline ends the last line; it does not start an empty one.
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut lines: Vec<(usize, &str)> = body
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    // Grid rows without `grid:` before them: one `missing_grid`, and the rows are read as a
    // grid, so the error does not repeat for every row and the entities are still checked.
    if let Some((at, message)) = implied_grid(&lines) {
        let ln = lines[at].0;
        diag.err(
            "missing_grid",
            ln,
            1,
            message,
            "write the line `grid:` right before the first row of tiles",
        );
        if strip_comment(lines[at].1.trim()) == "entities:" {
            lines[at].1 = "grid:";
        } else {
            lines.insert(at, (ln, "grid:"));
        }
    }
    for (ln, raw) in lines {
        last_line = ln;
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim_end();
        if line.chars().count() > MAX_LINE_CHARS {
            diag.err(
                "line_too_long",
                ln,
                MAX_LINE_CHARS + 1,
                format!(
                    "line {ln} has {} characters; at most {MAX_LINE_CHARS} are allowed",
                    line.chars().count()
                ),
                "rows are at most 512 tiles; split comments over several lines",
            );
            if section == Section::Grid {
                bad_rows.push(rows_read);
                rows_read += 1;
                grid_ok = false;
                if let Some((w, h)) = size {
                    tiles.extend(std::iter::repeat_n(Block::Empty, w as usize));
                    if rows_read >= h {
                        section = Section::AfterGrid;
                    }
                }
            }
            continue;
        }
        let trimmed = line.trim_start();
        let skippable = trimmed.is_empty() || trimmed.starts_with('#');
        match section {
            Section::Start => {
                if skippable {
                    continue;
                }
                let toks = tokens(strip_comment(line), 1);
                if toks.first().map(|t| t.1) == Some(HEADER) {
                    match toks.get(1).map(|t| t.1) {
                        Some("1") if toks.len() == 2 => {}
                        Some("1") => diag.err(
                            "bad_header",
                            ln,
                            toks[2].0,
                            format!(
                                "unexpected text after the version: `{}`",
                                clip(&line[toks[2].0 - 1..])
                            ),
                            "write the first line as `gcv-map 1`; a comment after it starts with `#`",
                        ),
                        Some(v) => diag.err(
                            "unsupported_version",
                            ln,
                            toks[1].0,
                            format!("format version `{v}` is not supported; this engine reads version 1"),
                            "write the first line as `gcv-map 1`",
                        ),
                        None => diag.err(
                            "bad_header",
                            ln,
                            1,
                            "the header line has no version".into(),
                            "write the first line as `gcv-map 1`",
                        ),
                    }
                    section = Section::Header;
                    continue;
                }
                diag.err(
                    "missing_header",
                    ln,
                    1,
                    format!("the first line must be `gcv-map 1`, found `{}`", clip(line)),
                    "add the line `gcv-map 1` at the top of the file",
                );
                section = Section::Header;
                // Fall through: read this line as a header line.
                if header_line(
                    diag,
                    ln,
                    line,
                    &mut name,
                    &mut size,
                    &mut size_line,
                    &mut defaults,
                    &mut crumble,
                ) {
                    section = begin_grid(diag, ln, size, size_line, &mut grid_line);
                    if section == Section::AfterGrid {
                        grid_ok = false;
                    }
                }
            }
            Section::Header => {
                if skippable {
                    continue;
                }
                if header_line(
                    diag,
                    ln,
                    line,
                    &mut name,
                    &mut size,
                    &mut size_line,
                    &mut defaults,
                    &mut crumble,
                ) {
                    section = begin_grid(diag, ln, size, size_line, &mut grid_line);
                    if section == Section::AfterGrid {
                        grid_ok = false;
                    }
                }
            }
            Section::GridUnsized => {
                if strip_comment(trimmed) == "entities:" {
                    section = Section::Entities;
                    entities_line = ln;
                }
            }
            Section::Grid => {
                let Some((w, h)) = size else {
                    section = Section::AfterGrid;
                    continue;
                };
                if strip_comment(trimmed) == "entities:" {
                    diag.err(
                        "grid_too_short",
                        ln,
                        1,
                        format!(
                            "the grid has {} but size says {h}",
                            count_of(rows_read, "row", "rows")
                        ),
                        format!(
                            "give exactly {} of {} after `grid:`, or change `size:`",
                            count_of(h, "row", "rows"),
                            count_of(w, "tile", "tiles")
                        ),
                    );
                    grid_ok = false;
                    section = Section::Entities;
                    entities_line = ln;
                    continue;
                }
                let n = line.chars().count() as i64;
                if n != w {
                    let hint = if n == 0 {
                        format!(
                            "a blank line is not allowed inside the grid; fill the row with {} ('.' is empty)",
                            count_of(w, "tile", "tiles")
                        )
                    } else if n < w {
                        format!(
                            "add {} ('.' for empty) so the row has exactly {w}",
                            count_of(w - n, "tile", "tiles")
                        )
                    } else {
                        format!(
                            "remove {} so the row has exactly {w}, or widen `size:`",
                            count_of(n - w, "tile", "tiles")
                        )
                    };
                    diag.err(
                        "ragged_row",
                        ln,
                        (n.min(w) + 1) as usize,
                        format!(
                            "grid row y={rows_read} has {} but size says width {w}",
                            count_of(n, "tile", "tiles")
                        ),
                        hint,
                    );
                    grid_ok = false;
                    bad_rows.push(rows_read);
                }
                let mut row_errors = 0;
                for (col, c) in line.chars().enumerate().take(w as usize) {
                    match Block::from_key(c) {
                        Some(b) => tiles.push(b),
                        None => {
                            if row_errors < 5 {
                                diag.err(
                                    "unknown_tile",
                                    ln,
                                    col + 1,
                                    format!("`{c}` is not a block character"),
                                    match ENTITIES.iter().find(|e| e.glyph == c) {
                                        Some(e) => format!(
                                            "`{c}` is how render_map draws a {}; write '.' here and `{} {} {}` in the entities section",
                                            e.name, e.name, col, rows_read
                                        ),
                                        None => format!(
                                            "use one of {}; entities go in the entities section",
                                            keys_list()
                                        ),
                                    },
                                );
                            }
                            row_errors += 1;
                            grid_ok = false;
                            if bad_rows.last() != Some(&rows_read) {
                                bad_rows.push(rows_read);
                            }
                            tiles.push(Block::Empty);
                        }
                    }
                }
                for _ in n.min(w)..w {
                    tiles.push(Block::Empty);
                }
                rows_read += 1;
                if rows_read >= h {
                    section = Section::AfterGrid;
                }
            }
            Section::AfterGrid => {
                if strip_comment(trimmed) == "entities:" {
                    section = Section::Entities;
                    entities_line = ln;
                    continue;
                }
                if let Some((w, h)) = size {
                    let n = line.chars().count() as i64;
                    if n == w
                        && !trimmed.is_empty()
                        && line.chars().all(|c| Block::from_key(c).is_some())
                    {
                        diag.err(
                            "grid_too_long",
                            ln,
                            1,
                            format!(
                                "this looks like a grid row, but the grid already has the {} size says",
                                count_of(h, "row", "rows")
                            ),
                            format!("set `size: {w} {}` or remove the extra row", h + 1),
                        );
                        grid_ok = false;
                        continue;
                    }
                }
                if skippable {
                    continue;
                }
                diag.err(
                    "unexpected_line",
                    ln,
                    1,
                    format!(
                        "expected `entities:` after the grid, found `{}`",
                        clip(line)
                    ),
                    "after the grid rows write the line `entities:` and then one entity per line",
                );
            }
            Section::Entities => {
                if skippable {
                    continue;
                }
                let body = strip_comment(line);
                let toks = tokens(body, 1);
                let Some(&(kcol, kind_name)) = toks.first() else {
                    continue;
                };
                let Some(kind) = EntityKind::from_name(kind_name) else {
                    let hint = if BLOCKS.iter().any(|b| b.name == kind_name) {
                        format!("`{kind_name}` is a block: draw it in the grid with its character")
                    } else {
                        format!("entity kinds are: {}", kinds_list())
                    };
                    diag.err(
                        "unknown_entity",
                        ln,
                        kcol,
                        format!("unknown entity kind `{kind_name}`"),
                        hint,
                    );
                    continue;
                };
                kinds_written.push(kind);
                if toks.len() < 3 {
                    diag.err(
                        "bad_entity_line",
                        ln,
                        kcol,
                        format!("`{}` needs tile coordinates", clip(body)),
                        format!("write `{kind_name} X Y` with X the column and Y the row (0 is top-left)"),
                    );
                    continue;
                }
                let mut coords = [0i64; 2];
                let mut ok = true;
                for (j, what) in ["x", "y"].iter().enumerate() {
                    let (c, t) = toks[1 + j];
                    match parse_int(t) {
                        Some(v) => coords[j] = v,
                        None => {
                            diag.err(
                                "bad_coordinate",
                                ln,
                                c,
                                format!("{what} coordinate `{t}` is not an integer"),
                                format!("write `{kind_name} X Y` with whole tile numbers, e.g. `{kind_name} 3 7`"),
                            );
                            ok = false;
                        }
                    }
                }
                let defs = kind.def().params;
                let mut values = defaults[(kind as u8 - 100) as usize].clone();
                parse_params(diag, ln, kind_name, defs, &toks[3..], &mut values);
                if !ok {
                    continue;
                }
                if let Some((w, h)) = size {
                    let (x, y) = (coords[0], coords[1]);
                    if x < 0 || y < 0 || x >= w || y >= h {
                        diag.err(
                            "entity_out_of_bounds",
                            ln,
                            toks[1].0,
                            format!("{kind_name} at ({x}, {y}) is outside the {w} x {h} map"),
                            format!(
                                "use x from 0 to {} and y from 0 to {} (0, 0 is the top-left tile)",
                                w - 1,
                                h - 1
                            ),
                        );
                        continue;
                    }
                }
                if entities.len() == MAX_ENTITIES {
                    // Said on the first entity past the limit, with the count once it is known
                    // (below the loop).
                    over_limit = Some(diag.errors.len());
                    diag.err(
                        "too_many_entities",
                        ln,
                        1,
                        format!("more than {MAX_ENTITIES} entities"),
                        "remove entities; collectibles are the easiest to spare",
                    );
                }
                entities.push(Entity {
                    kind,
                    x: coords[0] as i32,
                    y: coords[1] as i32,
                    params: values,
                });
                entity_lines.push(ln);
            }
        }
    }
    if let Some(e) = over_limit.and_then(|i| diag.errors.get_mut(i)) {
        let n = entities.len();
        e.message = format!("the map has {n} entities; at most {MAX_ENTITIES} are allowed");
        e.hint = format!(
            "remove {}; collectibles are the easiest to spare",
            count_of((n - MAX_ENTITIES) as i64, "entity", "entities")
        );
    }

    match section {
        Section::Start => {
            diag.err(
                "missing_header",
                1,
                1,
                "the file has only comments or blank lines".into(),
                "start with the line `gcv-map 1`; see the full example in the format reference",
            );
            return None;
        }
        Section::Header => {
            if name.is_none() {
                diag.err(
                    "missing_field",
                    last_line,
                    1,
                    "the header has no `name:`".into(),
                    "add a line like `name: Erste Schritte` before `grid:`",
                );
            }
            if size.is_none() && size_line == 0 {
                diag.err(
                    "missing_field",
                    last_line,
                    1,
                    "the header has no `size:`".into(),
                    "add a line like `size: 40 12` (width height) before `grid:`",
                );
            }
            diag.err(
                "missing_grid",
                last_line,
                1,
                "the map has no `grid:` section".into(),
                "after the header write `grid:` and then the rows of tiles",
            );
            return None;
        }
        Section::Grid => {
            let (w, h) = size.unwrap_or((0, 0));
            diag.err(
                "grid_too_short",
                last_line,
                1,
                format!(
                    "the file ends after {} but size says {h}",
                    count_of(rows_read, "grid row", "grid rows")
                ),
                format!(
                    "give exactly {} of {} after `grid:`, then `entities:`",
                    count_of(h, "row", "rows"),
                    count_of(w, "tile", "tiles")
                ),
            );
            return None;
        }
        Section::GridUnsized | Section::AfterGrid | Section::Entities => {}
    }
    if name.is_none() {
        diag.err(
            "missing_field",
            grid_line.max(1),
            1,
            "the header has no `name:`".into(),
            "add a line like `name: Erste Schritte` before `grid:`",
        );
    }
    let (w, h) = size?;
    // Rows that were never written read as empty (their error is already reported).
    let complete = tiles.len() as i64 == w * h;
    bad_rows.extend(tiles.len() as i64 / w.max(1)..h);
    tiles.resize((w * h) as usize, Block::Empty);
    let grid_ok = grid_ok && complete;
    if section == Section::AfterGrid {
        entities_line = last_line;
    }

    // Whole-map rules.
    let at = |x: i32, y: i32| tiles[(y as i64 * w + x as i64) as usize];
    let count = |k: EntityKind| entities.iter().filter(|e| e.kind == k).count();
    let starts: Vec<usize> = (0..entities.len())
        .filter(|&i| entities[i].kind == EntityKind::Start)
        .collect();
    if !kinds_written.contains(&EntityKind::Start) {
        diag.err(
            "no_start",
            entities_line,
            1,
            "the map has no start".into(),
            "add one line `start X Y` in the entities section",
        );
    }
    for &i in starts.iter().skip(1) {
        diag.err(
            "multiple_starts",
            entity_lines[i],
            1,
            "the map has more than one start".into(),
            "keep exactly one `start` line",
        );
    }
    let nests = count(EntityKind::Nest);
    if !kinds_written.contains(&EntityKind::Nest) {
        diag.err(
            "no_nest",
            entities_line,
            1,
            "the map has no nest (goal)".into(),
            "add at least one line `nest X Y` in the entities section",
        );
    }
    let caps: [(&str, &str, usize, usize, &str); 5] = [
        ("nest", "nests", nests, MAX_NESTS, "too_many_nests"),
        (
            "enemy",
            "enemies",
            count(EntityKind::Walker) + count(EntityKind::Flyer),
            MAX_ENEMIES,
            "too_many_enemies",
        ),
        (
            "rockfall spawner",
            "rockfall spawners",
            count(EntityKind::Rockfall),
            MAX_ROCKFALLS,
            "too_many_rockfalls",
        ),
        (
            "platform",
            "platforms",
            count(EntityKind::Platform),
            MAX_PLATFORMS,
            "too_many_platforms",
        ),
        (
            "spring",
            "springs",
            count(EntityKind::Spring),
            MAX_SPRINGS,
            "too_many_springs",
        ),
    ];
    for (one, what, n, max, code) in caps {
        if n > max {
            diag.err(
                code,
                entities_line,
                1,
                format!("the map has {n} {what}; at most {max} are allowed"),
                format!("remove {}", count_of((n - max) as i64, one, what)),
            );
        }
    }
    let dynamic = tiles
        .iter()
        .filter(|b| matches!(b, Block::Cracked | Block::Crumbling))
        .count();
    if dynamic > MAX_DYNAMIC_TILES {
        diag.err(
            "too_many_dynamic_tiles",
            grid_line,
            1,
            format!("the grid has {dynamic} cracked and crumbling tiles; at most {MAX_DYNAMIC_TILES} are allowed"),
            "replace some of them with rock or ledges",
        );
    }
    for (i, e) in entities.iter().enumerate() {
        let ln = entity_lines[i];
        let name = e.kind.def().name;
        if e.kind == EntityKind::Platform {
            let width = e.param(crate::sim::palette::PLATFORM_WIDTH) as i32;
            let ex = e.x + e.param(crate::sim::palette::PLATFORM_DX) as i32;
            let ey = e.y + e.param(crate::sim::palette::PLATFORM_DY) as i32;
            if e.x + width > w as i32 || ex < 0 || ex + width > w as i32 || ey < 0 || ey >= h as i32
            {
                diag.err(
                    "entity_out_of_bounds",
                    ln,
                    1,
                    format!("platform at ({}, {}) with width {width} travels to ({ex}, {ey}), outside the {w} x {h} map", e.x, e.y),
                    "keep x..x+width-1 and x+dx..x+dx+width-1 inside the columns and y+dy inside the rows",
                );
            }
            continue;
        }
        if e.kind == EntityKind::Flyer {
            let range = e.param(crate::sim::palette::FLYER_RANGE) as i32;
            let vertical = e.param(crate::sim::palette::FLYER_AXIS) == 1;
            let (lo, hi, size, axis) = if vertical {
                (e.y - range, e.y + range, h as i32, "rows")
            } else {
                (e.x - range, e.x + range, w as i32, "columns")
            };
            if lo < 0 || hi >= size {
                let (a, b) = if vertical { ("y", e.y) } else { ("x", e.x) };
                diag.err(
                    "entity_out_of_bounds",
                    ln,
                    1,
                    format!(
                        "flyer at ({}, {}) with range {range} patrols {a} {lo} to {hi}, outside the {w} x {h} map",
                        e.x, e.y
                    ),
                    format!(
                        "keep {a}-range..{a}+range inside the {axis} 0 to {}: lower range to {} or move the flyer",
                        size - 1,
                        (b).min(size - 1 - b).max(0)
                    ),
                );
            }
        }
        // With rows missing, any row may be shifted: the grid's error says enough.
        if complete && at(e.x, e.y).is_solid() && !bad_rows.contains(&(e.y as i64)) {
            diag.err(
                "entity_in_solid",
                ln,
                1,
                format!("{name} at ({}, {}) is inside a solid `{}` tile", e.x, e.y, at(e.x, e.y).key()),
                "move it to an empty tile ('.') or change the grid there; y counts rows from the top (0)",
            );
        }
    }
    let title = name.unwrap_or_default();
    let map = Map::from_parts(title, w as i32, h as i32, tiles, crumble[0], entities);
    let _ = size_line;
    Some(Parsed {
        map,
        entity_lines,
        grid_ok,
    })
}

fn clip(s: &str) -> String {
    let t: String = s.chars().take(40).collect();
    if t.len() < s.len() {
        format!("{t}...")
    } else {
        t
    }
}

/// Where a missing `grid:` line belongs when the file has none but has grid rows (lines of
/// block characters only) after the header, and what to say: before the first row, or in
/// place of an `entities:` line written before the rows instead of `grid:`.
fn implied_grid(lines: &[(usize, &str)]) -> Option<(usize, String)> {
    fn clean(l: &str) -> &str {
        l.strip_suffix('\r').unwrap_or(l).trim()
    }
    // `grid:` and `entities:` with a comment after them.
    fn keyword(l: &str) -> &str {
        strip_comment(clean(l))
    }
    if lines.iter().any(|(_, l)| keyword(l) == "grid:") {
        return None;
    }
    let header = lines
        .iter()
        .position(|(_, l)| clean(l).split_whitespace().next() == Some(HEADER))?;
    let row = |l: &str| {
        let l = clean(l);
        !l.is_empty() && !l.starts_with('#') && l.chars().all(|c| Block::from_key(c).is_some())
    };
    let first_row = header + 1 + lines[header + 1..].iter().position(|(_, l)| row(l))?;
    match lines[header + 1..first_row]
        .iter()
        .rposition(|(_, l)| keyword(l) == "entities:")
    {
        Some(e) => Some((
            header + 1 + e,
            "`entities:` comes before the grid rows; the grid starts with `grid:`".into(),
        )),
        None => Some((
            first_row,
            "this line looks like the first grid row, but there is no `grid:` line".into(),
        )),
    }
}

fn begin_grid(
    diag: &mut Diag,
    ln: usize,
    size: Option<(i64, i64)>,
    size_line: usize,
    grid_line: &mut usize,
) -> Section {
    *grid_line = ln;
    if size.is_some() {
        return Section::Grid;
    }
    // Without a size the rows cannot be checked; one error says why (none more if a wrong
    // `size:` line has its own).
    if size_line == 0 {
        diag.err(
            "missing_field",
            ln,
            1,
            "`grid:` comes before `size:`; the grid needs the size".into(),
            "add a line like `size: 40 12` (width height) before `grid:`",
        );
    }
    Section::GridUnsized
}

/// Reads one header line; returns true when it is `grid:`.
#[allow(clippy::too_many_arguments)]
fn header_line(
    diag: &mut Diag,
    ln: usize,
    line: &str,
    name: &mut Option<String>,
    size: &mut Option<(i64, i64)>,
    size_line: &mut usize,
    defaults: &mut [Vec<i64>],
    crumble: &mut [i64; 1],
) -> bool {
    let t = line.trim();
    // A `#` ends every header line but `name:`, whose value is kept as written.
    let bare = strip_comment(t);
    if bare == "grid:" {
        return true;
    }
    let field = match t.split_once(':') {
        Some((k, v)) if k.trim() == "name" => Some((k, v)),
        _ => bare.split_once(':'),
    };
    let Some((key, value)) = field else {
        diag.err(
            "unexpected_line",
            ln,
            1,
            format!("`{}` is not a header field", clip(t)),
            "header lines are `name: ...`, `size: W H` or `default: KIND param=value`, then `grid:`",
        );
        return false;
    };
    let key = key.trim();
    let vcol = line.len() - line.trim_start().len() + key.chars().count() + 2;
    // Errors point at the value's first character, after the spaces following the colon.
    let vstart = vcol + (value.len() - value.trim_start().len());
    match key {
        "name" => {
            let v = value.trim();
            if name.is_some() {
                diag.err(
                    "duplicate_field",
                    ln,
                    1,
                    "`name:` is given twice".into(),
                    "keep one `name:` line",
                );
            } else if v.is_empty() || v.chars().count() > MAX_NAME_CHARS {
                diag.err(
                    "bad_name",
                    ln,
                    vstart,
                    format!(
                        "the name has {} characters; it must be 1 to {MAX_NAME_CHARS}",
                        v.chars().count()
                    ),
                    "write e.g. `name: Erste Schritte`",
                );
                *name = Some(String::new());
            } else {
                *name = Some(v.to_string());
            }
        }
        "size" => {
            if size.is_some() {
                diag.err(
                    "duplicate_field",
                    ln,
                    1,
                    "`size:` is given twice".into(),
                    "keep one `size:` line",
                );
                return false;
            }
            // Given, even if wrong: no `missing_field` on top of its own error.
            *size_line = ln;
            let toks = tokens(strip_comment(value), vcol);
            let nums: Vec<Option<i64>> = toks.iter().map(|t| parse_int(t.1)).collect();
            match nums.as_slice() {
                [Some(w), Some(h)] => {
                    if !(MIN_WIDTH..=MAX_WIDTH).contains(w)
                        || !(MIN_HEIGHT..=MAX_HEIGHT).contains(h)
                    {
                        diag.err(
                            "size_out_of_range",
                            ln,
                            vstart,
                            format!("size {w} x {h} is out of range"),
                            format!("width must be {MIN_WIDTH} to {MAX_WIDTH} and height {MIN_HEIGHT} to {MAX_HEIGHT}"),
                        );
                    } else {
                        *size = Some((*w, *h));
                    }
                }
                _ => diag.err(
                    "bad_value",
                    ln,
                    vstart,
                    format!("`size:{value}` must be two integers, width then height"),
                    "write e.g. `size: 40 12`",
                ),
            }
        }
        "default" => {
            let toks = tokens(strip_comment(value), vcol);
            let Some(&(kc, kind)) = toks.first() else {
                diag.err(
                    "bad_value",
                    ln,
                    vstart,
                    "`default:` needs a kind and parameters".into(),
                    "write e.g. `default: walker speed=6`",
                );
                return false;
            };
            if let Some(k) = EntityKind::from_name(kind) {
                let defs = k.def().params;
                if defs.is_empty() {
                    diag.err(
                        "unknown_parameter",
                        ln,
                        kc,
                        format!("{kind} has no parameters to default"),
                        "remove this line",
                    );
                    return false;
                }
                let slot = &mut defaults[(k as u8 - 100) as usize];
                parse_params(diag, ln, kind, defs, &toks[1..], slot);
            } else if let Some(b) = BLOCKS
                .iter()
                .find(|b| b.name == kind && !b.params.is_empty())
            {
                parse_params(diag, ln, kind, b.params, &toks[1..], crumble);
            } else {
                diag.err(
                    "unknown_entity",
                    ln,
                    kc,
                    format!("`{kind}` has no parameters to default"),
                    format!(
                        "defaults exist for: {}, crumbling",
                        ENTITIES
                            .iter()
                            .filter(|e| !e.params.is_empty())
                            .map(|e| e.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
        "entities" => diag.err(
            "missing_grid",
            ln,
            1,
            "`entities:` comes before `grid:`".into(),
            "write `grid:` and the rows of tiles before `entities:`",
        ),
        _ => diag.err(
            "unknown_field",
            ln,
            1,
            format!("unknown header field `{key}`"),
            "header fields are `name:`, `size:` and `default:`; use `#` for comments",
        ),
    }
    false
}
