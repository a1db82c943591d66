//! What a subscribed Redis connection receives, read without redis-rs: the pub/sub listener's
//! own connection (`notifier.rs`) speaks RESP2 and gets only a few kinds of reply (`message`
//! and `pmessage` pushes, subscription confirmations, `pong`, `+OK`, errors). [`parse`] reads
//! one reply from the front of a byte slice and hands back borrowed pieces of it: nothing is
//! allocated per reply (a waiter's copy of a payload is the listener's, made only when someone
//! waits on the channel). [`Reader`] is the connection's buffer, grown to the largest reply
//! and reused.
//!
//! Anything a RESP2 server may send is read or skipped (an array of arrays, a longer array
//! than any push has); what RESP2 cannot be (RESP3 types, a length that is no number, a bulk
//! string without its `\r\n`) is a [`RespError`]: the listener drops the connection and makes
//! a new one, which wakes every waiter (see `notifier.rs`). Nothing here panics on input
//! (`resp::tests` feeds it arbitrary and mutated bytes).

use std::fmt;

/// Largest bulk string read: Redis's own limit (`proto-max-bulk-len`, 512 MB by default).
const MAX_BULK: usize = 512 * 1024 * 1024;
/// Most elements an array may declare; a push has 2 to 4.
const MAX_ELEMENTS: usize = 1 << 20;
/// How deep arrays may nest (a subscribed connection gets none nested).
const MAX_DEPTH: usize = 8;
/// Elements of an array kept for [`Reply`]: a `pmessage` has 4; the rest are skipped.
const KEPT: usize = 4;
/// Room the next read of the connection gets at least.
const READ_ROOM: usize = 16 * 1024;
/// A buffer grown past this by a large reply is given back once it is empty.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// Bytes that are not RESP2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RespError(&'static str);

impl fmt::Display for RespError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Redis sent what is not RESP2: {}", self.0)
    }
}

impl std::error::Error for RespError {}

/// One reply, as the listener needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reply<'a> {
    /// A `message` or `pmessage` push: the channel it was published on and its payload.
    Message {
        channel: &'a [u8],
        payload: &'a [u8],
    },
    /// A `subscribe` or `psubscribe` confirmation.
    Subscribed,
    /// The answer to `PING` (`pong` while subscribed, `+PONG` otherwise).
    Pong,
    /// `+OK` (the answer to `AUTH`).
    Ok,
    /// An error reply (`-ERR ...`), its text.
    Error(&'a [u8]),
    /// Anything else RESP2 can be (ignored by the listener).
    Other,
}

/// One element of an array, or a reply that is not an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item<'a> {
    Simple(&'a [u8]),
    Error(&'a [u8]),
    Int,
    Bulk(&'a [u8]),
    Nil,
    /// An array (nested, or the reply itself when it is one).
    Array,
}

/// Reads one reply from the front of `bytes`: the reply and how many bytes it took, `None`
/// while `bytes` holds only part of it, an error for bytes that are not RESP2.
pub(crate) fn parse(bytes: &[u8]) -> Result<Option<(Reply<'_>, usize)>, RespError> {
    let mut at = 0;
    let mut kept = [Item::Nil; KEPT];
    let Some(top) = item(bytes, &mut at, 0, Some(&mut kept))? else {
        return Ok(None);
    };
    let reply = match top {
        Item::Simple(b"OK") => Reply::Ok,
        Item::Simple(s) if s.eq_ignore_ascii_case(b"PONG") => Reply::Pong,
        Item::Error(e) => Reply::Error(e),
        Item::Array => match kept {
            [Item::Bulk(b"pmessage"), Item::Bulk(_), Item::Bulk(channel), Item::Bulk(payload)] => {
                Reply::Message { channel, payload }
            }
            [Item::Bulk(b"message"), Item::Bulk(channel), Item::Bulk(payload), Item::Nil] => {
                Reply::Message { channel, payload }
            }
            [Item::Bulk(b"psubscribe" | b"subscribe"), ..] => Reply::Subscribed,
            [Item::Bulk(b"pong"), ..] => Reply::Pong,
            _ => Reply::Other,
        },
        _ => Reply::Other,
    };
    Ok(Some((reply, at)))
}

/// Reads one item at `*at` (moving it past), an array's elements with it (the first
/// [`KEPT`] of the top array into `kept`, whose length ends at the first `Nil` left; a
/// message's parts are never nil). `None`: not all of it is there yet.
fn item<'a>(
    bytes: &'a [u8],
    at: &mut usize,
    depth: usize,
    kept: Option<&mut [Item<'a>; KEPT]>,
) -> Result<Option<Item<'a>>, RespError> {
    let Some(&kind) = bytes.get(*at) else {
        return Ok(None);
    };
    if !matches!(kind, b'+' | b'-' | b':' | b'$' | b'*') {
        return Err(RespError("an unknown type byte"));
    }
    let Some(line) = line(bytes, *at + 1)? else {
        return Ok(None);
    };
    let after_line = *at + 1 + line.len() + 2;
    let found = match kind {
        b'+' => Item::Simple(line),
        b'-' => Item::Error(line),
        b':' => {
            number(line)?;
            Item::Int
        }
        b'$' => {
            let len = number(line)?;
            if len == -1 {
                Item::Nil
            } else {
                let len = usize::try_from(len)
                    .ok()
                    .filter(|n| *n <= MAX_BULK)
                    .ok_or(RespError("a bulk string's length out of range"))?;
                let end = after_line + len;
                if bytes.len() < end + 2 {
                    return Ok(None);
                }
                if &bytes[end..end + 2] != b"\r\n" {
                    return Err(RespError("a bulk string not ended by \\r\\n"));
                }
                *at = end + 2;
                return Ok(Some(Item::Bulk(&bytes[after_line..end])));
            }
        }
        b'*' => {
            let len = number(line)?;
            if len == -1 {
                *at = after_line;
                return Ok(Some(Item::Nil));
            }
            let len = usize::try_from(len)
                .ok()
                .filter(|n| *n <= MAX_ELEMENTS)
                .ok_or(RespError("an array's length out of range"))?;
            if depth >= MAX_DEPTH {
                return Err(RespError("arrays nested too deep"));
            }
            *at = after_line;
            let mut kept = kept;
            for i in 0..len {
                let Some(element) = item(bytes, at, depth + 1, None)? else {
                    return Ok(None);
                };
                if let Some(slot) = kept.as_deref_mut().and_then(|k| k.get_mut(i)) {
                    *slot = element;
                }
            }
            // A longer array than a push is none: no message, whatever its first parts.
            if len > KEPT {
                if let Some(k) = kept {
                    k[0] = Item::Array;
                }
            }
            return Ok(Some(Item::Array));
        }
        _ => return Err(RespError("an unknown type byte")),
    };
    *at = after_line;
    Ok(Some(found))
}

/// The line starting at `from`, without its `\r\n`; `None` while its end is not there.
fn line(bytes: &[u8], from: usize) -> Result<Option<&[u8]>, RespError> {
    let rest = bytes.get(from..).unwrap_or_default();
    match rest.iter().position(|&b| b == b'\n') {
        None => Ok(None),
        Some(0) => Err(RespError("a line without \\r")),
        Some(n) if rest[n - 1] != b'\r' => Err(RespError("a line without \\r")),
        Some(n) => Ok(Some(&rest[..n - 1])),
    }
}

/// A length or an integer: an optional `-` and 1 to 18 digits.
fn number(line: &[u8]) -> Result<i64, RespError> {
    let (negative, digits) = match line.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(RespError("a number that is not one"));
    }
    let n = digits
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Ok(if negative { -n } else { n })
}

/// A connection's read buffer: what was read and not yet parsed.
pub(crate) struct Reader {
    buf: Vec<u8>,
    /// Where the first reply not yet taken starts.
    at: usize,
}

impl Reader {
    pub(crate) fn new() -> Reader {
        Reader {
            buf: Vec::with_capacity(READ_ROOM),
            at: 0,
        }
    }

    /// The next whole reply read and its length: hand the length to [`Reader::consume`]
    /// once the reply is used.
    pub(crate) fn next(&self) -> Result<Option<(Reply<'_>, usize)>, RespError> {
        parse(&self.buf[self.at..])
    }

    /// The reply of `len` bytes [`Reader::next`] gave is used.
    pub(crate) fn consume(&mut self, len: usize) {
        self.at = (self.at + len).min(self.buf.len());
        if self.at == self.buf.len() {
            self.buf.clear();
            self.at = 0;
            if self.buf.capacity() > KEEP_CAPACITY {
                self.buf.shrink_to(READ_ROOM);
            }
        }
    }

    /// The buffer to read into (appending), with room for at least [`READ_ROOM`] bytes;
    /// replies already taken are dropped from its front first when that makes the room.
    pub(crate) fn room(&mut self) -> &mut Vec<u8> {
        if self.buf.capacity() - self.buf.len() < READ_ROOM {
            if self.at > 0 {
                self.buf.drain(..self.at);
                self.at = 0;
            }
            self.buf.reserve(READ_ROOM);
        }
        &mut self.buf
    }
}

/// A command as RESP2 (an array of bulk strings), appended to `out`.
pub(crate) fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    out.extend_from_slice(args.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in args {
        out.push(b'$');
        out.extend_from_slice(arg.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn config(cases: u32) -> ProptestConfig {
        ProptestConfig {
            cases,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x7265_7370),
            failure_persistence: None,
            ..ProptestConfig::default()
        }
    }

    fn bulk(b: &[u8]) -> Vec<u8> {
        let mut out = format!("${}\r\n", b.len()).into_bytes();
        out.extend_from_slice(b);
        out.extend_from_slice(b"\r\n");
        out
    }

    fn pmessage(pattern: &[u8], channel: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut out = b"*4\r\n".to_vec();
        for part in [&b"pmessage"[..], pattern, channel, payload] {
            out.extend(bulk(part));
        }
        out
    }

    /// Every reply in `bytes`, read as the listener reads them (fed in pieces of `chunk`).
    fn replies(bytes: &[u8], chunk: usize) -> Result<Vec<String>, RespError> {
        let mut reader = Reader::new();
        let mut seen = Vec::new();
        for piece in bytes.chunks(chunk.max(1)) {
            reader.room().extend_from_slice(piece);
            while let Some((reply, used)) = reader.next()? {
                seen.push(format!("{reply:?}"));
                reader.consume(used);
            }
        }
        Ok(seen)
    }

    #[test]
    fn what_a_subscribed_connection_gets_is_read() {
        let m = pmessage(b"t:*", b"t:ses:1", b"{\"v\":1}\r\n\0");
        let (r, n) = parse(&m).unwrap().unwrap();
        assert_eq!(n, m.len());
        assert_eq!(
            r,
            Reply::Message {
                channel: b"t:ses:1",
                payload: b"{\"v\":1}\r\n\0"
            }
        );
        let m = b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$0\r\n\r\n";
        assert_eq!(
            parse(m).unwrap(),
            Some((
                Reply::Message {
                    channel: b"ch",
                    payload: b""
                },
                m.len()
            ))
        );
        let cases: [(&[u8], Reply); 8] = [
            (
                b"*3\r\n$10\r\npsubscribe\r\n$3\r\nt:*\r\n:1\r\n",
                Reply::Subscribed,
            ),
            (
                b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:2\r\n",
                Reply::Subscribed,
            ),
            (b"*2\r\n$4\r\npong\r\n$0\r\n\r\n", Reply::Pong),
            (b"+PONG\r\n", Reply::Pong),
            (b"+OK\r\n", Reply::Ok),
            (
                b"-WRONGPASS invalid\r\n",
                Reply::Error(b"WRONGPASS invalid"),
            ),
            (b":12\r\n", Reply::Other),
            // Five parts is no message, whatever its first four are.
            (
                b"*5\r\n$8\r\npmessage\r\n$1\r\np\r\n$1\r\nc\r\n$1\r\nx\r\n$1\r\ny\r\n",
                Reply::Other,
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                parse(bytes).unwrap(),
                Some((want, bytes.len())),
                "{bytes:?}"
            );
        }
        // Nested arrays, nil bulk strings and nil arrays are skipped whole.
        let odd = b"*3\r\n*2\r\n:1\r\n$-1\r\n*-1\r\n$1\r\nx\r\n+OK\r\n";
        assert_eq!(parse(odd).unwrap(), Some((Reply::Other, odd.len() - 5)));
        // A message whose parts are not all bulk strings is none.
        let m = b"*3\r\n$7\r\nmessage\r\n:1\r\n$1\r\nx\r\n";
        assert_eq!(parse(m).unwrap(), Some((Reply::Other, m.len())));
    }

    #[test]
    fn a_reply_in_pieces_waits_for_its_end_and_bad_bytes_are_errors() {
        let m = pmessage(b"t:*", b"t:c", &[7u8; 300]);
        for cut in 0..m.len() {
            assert_eq!(parse(&m[..cut]).unwrap(), None, "cut at {cut}");
        }
        for bad in [
            &b"$3\r\nabcd\r\n"[..],
            b"$-2\r\n",
            b"$x\r\n",
            b"$\r\n",
            b"*1\n",
            b"\n",
            b"%1\r\n",
            b">3\r\n",
            b"$999999999999999999999\r\n",
            b"$536870913\r\n",
            b"*1048577\r\n",
            b"*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        // A huge declared length is not allocated: the reply is just not whole yet.
        assert_eq!(parse(b"$536870912\r\nab").unwrap(), None);
        assert_eq!(parse(b"*1048576\r\n:1\r\n").unwrap(), None);
    }

    #[test]
    fn the_reader_keeps_what_follows_a_reply_and_reuses_its_buffer() {
        let mut bytes = Vec::new();
        for i in 0..50u8 {
            bytes.extend(pmessage(b"t:*", &[b'c', i], &vec![i; usize::from(i) * 40]));
            bytes.extend_from_slice(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
        }
        let whole = replies(&bytes, bytes.len()).unwrap();
        assert_eq!(whole.len(), 100);
        for chunk in [1, 2, 3, 7, 64, 1000] {
            assert_eq!(replies(&bytes, chunk).unwrap(), whole, "chunks of {chunk}");
        }
        // A large reply grows the buffer; once it is taken, the buffer shrinks again.
        let mut reader = Reader::new();
        let big = pmessage(b"*", b"c", &vec![b'x'; 3 * KEEP_CAPACITY]);
        for piece in big.chunks(READ_ROOM) {
            reader.room().extend_from_slice(piece);
        }
        let (_, used) = reader.next().unwrap().unwrap();
        reader.consume(used);
        assert!(reader.buf.capacity() <= KEEP_CAPACITY);
    }

    #[test]
    fn commands_are_resp_arrays() {
        let mut out = Vec::new();
        command(&mut out, &[b"PSUBSCRIBE", b"t:*", b""]);
        assert_eq!(out, b"*3\r\n$10\r\nPSUBSCRIBE\r\n$3\r\nt:*\r\n$0\r\n\r\n");
    }

    /// Replies the listener meets, to mutate.
    fn corpus() -> Vec<u8> {
        let mut out = b"+OK\r\n*3\r\n$10\r\npsubscribe\r\n$3\r\nt:*\r\n:1\r\n".to_vec();
        out.extend(pmessage(b"t:*", b"t:ses:00000001", b"\x93\x01\xa2hi\r\n"));
        out.extend_from_slice(b"*2\r\n$4\r\npong\r\n$0\r\n\r\n-ERR x\r\n");
        out.extend_from_slice(b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$-1\r\n");
        out
    }

    /// Whatever the bytes, reading them in any pieces never panics, reads the same replies
    /// as reading them whole, and a reply never claims more bytes than there are.
    fn read_any(bytes: &[u8], chunk: usize) {
        let whole = replies(bytes, bytes.len().max(1));
        let pieces = replies(bytes, chunk);
        match (&whole, &pieces) {
            (Ok(w), Ok(p)) => assert_eq!(w, p),
            // Pieces may stop at the first error; whole too (the same error, or earlier
            // replies and then it).
            (Err(_), Err(_)) => {}
            _ => panic!("whole {whole:?} pieces {pieces:?}"),
        }
        let mut at = 0;
        while let Ok(Some((_, used))) = parse(&bytes[at..]) {
            assert!(used > 0 && at + used <= bytes.len());
            at += used;
        }
    }

    proptest! {
        #![proptest_config(config(2000))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), chunk in 1usize..40) {
            read_any(&bytes, chunk);
        }

        #[test]
        fn mutated_replies_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            cut in any::<prop::sample::Index>(),
            chunk in 1usize..40,
        ) {
            let mut bytes = corpus();
            for (i, b) in edits {
                let i = i.index(bytes.len());
                bytes[i] = b;
            }
            let cut = cut.index(bytes.len() + 1);
            read_any(&bytes[..cut], chunk);
        }

        #[test]
        fn any_message_reads_back(
            pattern in proptest::collection::vec(any::<u8>(), 0..20),
            channel in proptest::collection::vec(any::<u8>(), 0..40),
            payload in proptest::collection::vec(any::<u8>(), 0..400),
            chunk in 1usize..64,
        ) {
            let m = pmessage(&pattern, &channel, &payload);
            let want = Reply::Message { channel: &channel, payload: &payload };
            prop_assert_eq!(parse(&m).unwrap(), Some((want, m.len())));
            prop_assert_eq!(replies(&m, chunk).unwrap(), vec![format!("{want:?}")]);
        }
    }
}
