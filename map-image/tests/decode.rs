//! The encoder's output read back by an independent decoder (the `png` crate checks the
//! signature, every chunk's CRC, the zlib stream and its Adler-32), pixel for pixel.

use horst_map_image::png::{encode, Indexed};
use horst_map_image::{draw, Window, TILE_PX};

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>, Vec<u8>) {
    let mut d = png::Decoder::new(std::io::Cursor::new(bytes));
    d.set_transformations(png::Transformations::IDENTITY);
    let mut r = d.read_info().expect("a PNG header");
    let mut buf = vec![0; r.output_buffer_size().expect("a buffer size")];
    let info = r.next_frame(&mut buf).expect("a frame");
    assert_eq!(info.color_type, png::ColorType::Indexed);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    let palette = r.info().palette.as_ref().expect("a palette").to_vec();
    (info.width, info.height, buf, palette)
}

/// xorshift64*, so the random images repeat.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn images_of_every_shape_decode_to_their_pixels() {
    let palette: Vec<[u8; 3]> = (0..=255u8).map(|i| [i, 255 - i, i / 2]).collect();
    let mut next = rng(7);
    for (w, h, colours, runs) in [
        (1, 1, 1, false),
        (3, 2, 4, false),
        (17, 9, 256, false),
        (300, 40, 256, false),
        (64, 64, 3, true),
        (1441, 30, 5, true),
        (3000, 12, 2, true),
    ] {
        let mut pixels = Vec::with_capacity(w * h);
        while pixels.len() < w * h {
            let c = (next() % colours) as u8;
            let n = if runs { 1 + next() % 40 } else { 1 };
            pixels.extend(std::iter::repeat_n(c, n as usize));
        }
        pixels.truncate(w * h);
        // Some rows repeat the one above, as tile rows do.
        if runs {
            for y in (1..h).step_by(2) {
                pixels.copy_within((y - 1) * w..y * w, y * w);
            }
        }
        let bytes = encode(&Indexed {
            width: w as u32,
            height: h as u32,
            palette: &palette[..colours as usize],
            pixels: &pixels,
        });
        let (dw, dh, got, pal) = decode(&bytes);
        assert_eq!((dw, dh), (w as u32, h as u32));
        assert_eq!(got, pixels, "{w}x{h}");
        assert_eq!(pal.len(), 3 * colours as usize);
    }
}

#[test]
fn a_drawn_level_shows_its_tiles_and_entities_in_the_legend_colours() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let text = std::fs::read_to_string(root.join("01-erste-schritte.map")).unwrap();
    let map = horst_engine::parse_map(&text).expect("a valid shipped level");
    let window = Window {
        x: 0,
        y: 0,
        width: 120,
        height: 30,
    }
    .clip(map.width() as i64, map.height() as i64)
    .unwrap();
    let pic = draw(&map, window);
    let (w, h, pixels, palette) = decode(&pic.png);
    assert_eq!((w, h), (pic.width, pic.height));
    assert_eq!(w, window.width as u32 * TILE_PX);
    assert_eq!(h, window.height as u32 * TILE_PX);
    let colour_at = |tx: i64, ty: i64, px: u32, py: u32| {
        let x = (tx - window.x) as u32 * TILE_PX + px;
        let y = (ty - window.y) as u32 * TILE_PX + py;
        let i = pixels[(y * w + x) as usize] as usize;
        format!(
            "#{:02x}{:02x}{:02x}",
            palette[3 * i],
            palette[3 * i + 1],
            palette[3 * i + 2]
        )
    };
    let legend = |name: &str| {
        pic.legend
            .iter()
            .find(|e| e.name == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", pic.legend))
            .colour
            .clone()
    };
    // The start and a nest are drawn at their tiles, in their legend colours.
    let (sx, sy) = map.start();
    assert_eq!(colour_at(sx.into(), sy.into(), 6, 6), legend("start"));
    let (nx, ny) = map.nests()[0];
    assert_eq!(colour_at(nx.into(), ny.into(), 6, 1), legend("nest"));
    // A solid tile's centre has its block's colour; the legend lists every block drawn.
    let mut checked = 0;
    for ty in window.y..window.y + window.height {
        for tx in window.x..window.x + window.width {
            let b = map.tile(tx as i32, ty as i32).unwrap();
            let on_entity = map
                .entities()
                .iter()
                .any(|e| i64::from(e.x) <= tx && tx < i64::from(e.x) + 8 && i64::from(e.y) == ty);
            if b == horst_engine::Block::Earth && !on_entity {
                assert_eq!(colour_at(tx, ty, 6, 6), legend("earth"));
                checked += 1;
            }
            if b == horst_engine::Block::Grass && !on_entity {
                assert_eq!(colour_at(tx, ty, 6, 1), legend("grass"));
            }
        }
    }
    assert!(checked > 10, "the level has earth");
    if let Ok(dir) = std::env::var("MAP_IMAGE_OUT") {
        std::fs::write(std::path::Path::new(&dir).join("01.png"), &pic.png).unwrap();
    }
    // Flat colours compress: far below one byte a pixel.
    assert!(
        pic.png.len() < (w * h / 20) as usize,
        "{} bytes for {w}x{h}",
        pic.png.len()
    );
}

#[test]
fn every_shipped_level_draws_and_decodes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../levels");
    let mut n = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("map") {
            continue;
        }
        let map = horst_engine::parse_map(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|_| panic!("{} is valid", path.display()));
        let window = Window {
            x: 0,
            y: 0,
            width: 120,
            height: 30,
        }
        .clip(map.width() as i64, map.height() as i64)
        .unwrap();
        let pic = draw(&map, window);
        let (w, h, pixels, _) = decode(&pic.png);
        assert_eq!((w, h), (pic.width, pic.height), "{}", path.display());
        assert_eq!(pixels.len(), (w * h) as usize);
        assert!(
            pic.legend.iter().any(|e| e.name == "start"),
            "{}",
            path.display()
        );
        if let Ok(dir) = std::env::var("MAP_IMAGE_OUT") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            std::fs::write(
                std::path::Path::new(&dir).join(format!("{name}.png")),
                &pic.png,
            )
            .unwrap();
        }
        n += 1;
    }
    assert!(n >= 15, "{n} levels");
}
