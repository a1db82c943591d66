//! A small PNG encoder for indexed images (8-bit palette, no filter): zlib with one
//! fixed-Huffman deflate block whose matches repeat the previous byte or the byte one row
//! up. Drawn maps are flat colours in tile-sized repeats, so these two kinds of match are
//! where nearly all of the compression is, and the encoder stays a page of code with no
//! dependency. Its tests decode the output with the `png` crate.

/// An 8-bit indexed image.
pub struct Indexed<'a> {
    pub width: u32,
    pub height: u32,
    /// At most 256 colours.
    pub palette: &'a [[u8; 3]],
    /// `width * height` palette indexes, row by row.
    pub pixels: &'a [u8],
}

/// The PNG file of `img`. Panics if the pixel count or the palette does not fit (a caller bug,
/// never input).
pub fn encode(img: &Indexed) -> Vec<u8> {
    let (w, h) = (img.width as usize, img.height as usize);
    assert_eq!(img.pixels.len(), w * h, "pixel count");
    assert!(
        !img.palette.is_empty() && img.palette.len() <= 256,
        "palette size"
    );
    let mut raw = Vec::with_capacity((w + 1) * h);
    for row in img.pixels.chunks(w.max(1)) {
        raw.push(0); // filter: none
        raw.extend_from_slice(row);
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&img.width.to_be_bytes());
    ihdr.extend_from_slice(&img.height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]); // depth 8, indexed, deflate, no filter, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    let plte: Vec<u8> = img.palette.iter().flatten().copied().collect();
    chunk(&mut out, b"PLTE", &plte);
    chunk(&mut out, b"IDAT", &zlib(&raw, w + 1));
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn crc32(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, e) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    !bytes.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in bytes.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    (b << 16) | a
}

/// Deflate writes bits from the least significant end.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u32, count: u32) {
        self.acc |= u64::from(value) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// A Huffman code goes most significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        self.put(code.reverse_bits() >> (32 - len), len);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// The fixed literal/length code of RFC 1951, 3.2.6.
fn lit_len(bits: &mut Bits, symbol: u32) {
    match symbol {
        0..=143 => bits.code(0x30 + symbol, 8),
        144..=255 => bits.code(0x190 + symbol - 144, 9),
        256..=279 => bits.code(symbol - 256, 7),
        _ => bits.code(0xC0 + symbol - 280, 8),
    }
}

const LEN_BASE: [u32; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u32; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u32; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

fn put_match(bits: &mut Bits, len: u32, dist: u32) {
    let i = LEN_BASE.iter().rposition(|&b| b <= len).unwrap_or(0);
    lit_len(bits, 257 + i as u32);
    bits.put(len - LEN_BASE[i], LEN_EXTRA[i]);
    let d = DIST_BASE.iter().rposition(|&b| b <= dist).unwrap_or(0);
    bits.code(d as u32, 5);
    bits.put(dist - DIST_BASE[d], DIST_EXTRA[d]);
}

/// How many bytes from `i` repeat the bytes `dist` earlier (at most 258).
fn run(data: &[u8], i: usize, dist: usize) -> usize {
    if dist == 0 || i < dist {
        return 0;
    }
    let max = (data.len() - i).min(258);
    (0..max)
        .take_while(|&k| data[i + k] == data[i + k - dist])
        .count()
}

/// A zlib stream of `data`; `stride` (one row of scanline bytes) is the second match
/// distance tried, so a row equal to the one above costs a few bytes.
fn zlib(data: &[u8], stride: usize) -> Vec<u8> {
    let mut bits = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        n: 0,
    };
    bits.put(1, 1); // the final block
    bits.put(1, 2); // fixed Huffman codes
    let stride = if stride <= 32_768 { stride } else { 0 };
    let mut i = 0;
    while i < data.len() {
        let (a, b) = (run(data, i, 1), run(data, i, stride));
        let (len, dist) = if b >= a { (b, stride) } else { (a, 1) };
        if len >= 3 {
            put_match(&mut bits, len as u32, dist as u32);
            i += len;
        } else {
            lit_len(&mut bits, u32::from(data[i]));
            i += 1;
        }
    }
    lit_len(&mut bits, 256);
    let mut out = bits.finish();
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_their_published_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(&[]), 1);
    }
}
