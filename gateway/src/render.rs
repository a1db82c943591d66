//! `render_map`: the window clipped to the map (`horst_map_image::view`), as text and, with
//! `image: true`, as a PNG picture in an image content block.

use schemars::JsonSchema;
use serde::Serialize;

use crate::args::RenderMapArgs;
use crate::error::ToolError;

/// A window in tile coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct WindowView {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

impl From<horst_map_image::Window> for WindowView {
    fn from(w: horst_map_image::Window) -> WindowView {
        WindowView {
            x: w.x,
            y: w.y,
            width: w.width,
            height: w.height,
        }
    }
}

/// One colour of the picture: a symbol of the text's legend.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LegendColour {
    /// The character the text draws
    pub symbol: String,
    pub name: String,
    /// #rrggbb
    pub colour: String,
}

/// What the image content block shows.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageInfo {
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
    /// Pixels per tile side
    pub tile_pixels: u32,
    pub legend: Vec<LegendColour>,
}

/// The `render_map` result.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RenderResult {
    /// One character per tile, with a ruler and a legend
    pub text: String,
    /// The window drawn: the one asked for, clipped to the map
    pub window: WindowView,
    /// The window asked for
    pub requested: WindowView,
    /// The window asked for reached outside the map
    pub clipped: bool,
    pub map_width: i64,
    pub map_height: i64,
    /// With image true: what the image content block shows
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
}

/// The result and, with `image: true`, the PNG file, drawn on a blocking thread: the map
/// (up to 256 KB) is parsed whole and the picture compressed, which would hold up every other
/// request on the runtime's thread meanwhile.
pub async fn render_off_runtime(
    a: &RenderMapArgs,
) -> Result<(RenderResult, Option<Vec<u8>>), ToolError> {
    let requested = horst_map_image::Window {
        x: a.x.0,
        y: a.y.0,
        width: a.width.0,
        height: a.height.0,
    };
    let image = a.image.is_some_and(|f| f.0);
    let map = a.map.as_str().to_string();
    let view = crate::blocking::off_runtime(move || {
        horst_map_image::view(&map, requested, image).map_err(|e| invalid_map(&map, e))
    })
    .await??;
    Ok(result_of(view))
}

/// An invalid map is answered as every tool answers one ([`ToolError::invalid_map`]): with
/// the errors `validate_map` lists, each with its line, column and hint, not only the first
/// one's summary. Parsed again only on this path, so a drawn map costs one parse.
fn invalid_map(map: &str, e: horst_engine::EngineError) -> ToolError {
    match (&e, horst_engine::parse_map(map)) {
        (horst_engine::EngineError::InvalidMap(_), Err(report)) => ToolError::invalid_map(
            format!(
                "the map is invalid, so nothing was drawn: {}; fix the errors (each with its line, column and a hint, as validate_map lists them)",
                report.summary()
            ),
            &report,
        ),
        _ => e.into(),
    }
}

/// The `render_map` result of a view (`horst map render --json` prints the same).
pub fn result_of(v: horst_map_image::View) -> (RenderResult, Option<Vec<u8>>) {
    let (info, png) = match v.picture {
        Some(p) => (
            Some(ImageInfo {
                mime_type: "image/png".into(),
                width: p.width,
                height: p.height,
                tile_pixels: horst_map_image::TILE_PX,
                legend: p
                    .legend
                    .into_iter()
                    .map(|e| LegendColour {
                        symbol: e.symbol.to_string(),
                        name: e.name.to_string(),
                        colour: e.colour,
                    })
                    .collect(),
            }),
            Some(p.png),
        ),
        None => (None, None),
    };
    (
        RenderResult {
            text: v.text,
            window: v.window.into(),
            requested: v.requested.into(),
            clipped: v.clipped,
            map_width: v.map_width,
            map_height: v.map_height,
            image: info,
        },
        png,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A render (the map parsed whole, a PNG compressed) leaves the runtime's thread free for
    /// other tasks meanwhile: with one runtime thread it held up every other request.
    #[test]
    fn a_render_does_not_hold_the_runtime_thread() {
        let map = horst_levels::BUILTIN.last().unwrap().map;
        let args: RenderMapArgs = serde_json::from_value(serde_json::json!({
            "map": map, "x": 0, "y": 0, "width": 120, "height": 30, "image": true
        }))
        .unwrap();
        let during = crate::blocking::tests::turns_of_others_during(|| async {
            let (result, png) = render_off_runtime(&args).await.unwrap();
            assert!(png.is_some() && !result.text.is_empty());
        });
        assert!(during > 0, "no other task ran while the map was drawn");
    }
}
