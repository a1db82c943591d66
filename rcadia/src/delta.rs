//! Byte deltas of a record against its base (`record.rs`): what a write sends instead of the
//! whole record.
//!
//! A delta is a list of operations that rebuild the new bytes from the base: `copy n bytes
//! from the base at offset o` or `insert these n bytes`. Each starts with a LEB128 varint
//! `n << 1 | kind` (kind 1 = copy, then the offset as a varint; kind 0 = insert, then the n
//! bytes). A record's writes change a few timestamps, counters and queue entries in place,
//! so the delta of a 650-byte record is typically 60-150 bytes.
//!
//! The encoder walks the new bytes keeping the base position they line up with (a changed
//! timestamp is the same length as the old one: the bytes after it match again right there)
//! and, where that fails, looks the next 4 bytes up in a hash chain of the base (an inserted
//! or dropped queue entry shifts the rest). It never fails: at worst it inserts everything.

/// Fewer matching bytes than this at the aligned position are sent as an insert.
const MIN_ALIGNED: usize = 4;
/// A copy found through the hash chain must be at least this long (short ones are mostly
/// coincidences of MessagePack headers).
const MIN_FOUND: usize = 8;
/// Candidates looked at per lookup.
const MAX_CHAIN: usize = 16;
/// A run of misses asks the hash chain at every this many bytes (see `Index::delta`); at
/// most MIN_FOUND - 3, so that a findable copy always has a gram at such a byte.
const FIND_STEP: usize = 4;

/// The delta that rebuilds `new` from `base`.
pub(crate) fn delta(base: &[u8], new: &[u8]) -> Vec<u8> {
    delta_within(base, new, usize::MAX).unwrap_or_default()
}

/// [`delta`], or `None` as soon as it would be longer than `limit` bytes: a record that
/// drifted far from its base is rebased anyway (record.rs), and finishing its delta was the
/// costliest part of the encoder (most of its bytes are misses, each a hash-chain lookup).
pub(crate) fn delta_within(base: &[u8], new: &[u8], limit: usize) -> Option<Vec<u8>> {
    CHAINS.with(|chains| {
        let mut chains = chains.borrow_mut();
        Index {
            bytes: base,
            chains: &mut chains,
            built: false,
        }
        .delta(new, limit)
    })
}

/// The hash chain's two tables, kept per thread and reused by every delta: a write's delta
/// allocated and zeroed about 6.6 KB for a 650-byte record, which showed in the API's
/// profile (allocation was a quarter of its CPU).
#[derive(Default)]
struct Chains {
    /// Per hash bucket, the last position with that hash, plus one (0 = none).
    head: Vec<u32>,
    /// Per position, the previous position with the same hash, plus one.
    prev: Vec<u32>,
}

thread_local! {
    static CHAINS: std::cell::RefCell<Chains> = std::cell::RefCell::default();
}

/// A base prepared for deltas: a hash chain of its 4-byte grams, built on the first lookup
/// (a delta whose changes all stay in place needs none).
struct Index<'a, 'c> {
    bytes: &'a [u8],
    chains: &'c mut Chains,
    built: bool,
}

/// The 4 bytes at `i` as a number (0 past the end: callers ask within the bytes).
fn gram(b: &[u8], i: usize) -> u32 {
    b.get(i..)
        .and_then(<[u8]>::first_chunk::<4>)
        .map_or(0, |g| u32::from_le_bytes(*g))
}

impl Index<'_, '_> {
    fn build(&mut self) {
        let bytes = self.bytes;
        let buckets = bytes.len().next_power_of_two().max(64);
        let Chains { head, prev } = &mut *self.chains;
        head.clear();
        head.resize(buckets, 0);
        // Not zeroed: a position's entry is written when the position is put in its chain,
        // before anything can reach it, and only chained positions are ever read.
        if prev.len() < bytes.len() {
            prev.resize(bytes.len(), 0);
        }
        // A plain slice, so the table's pointer and length stay in registers (a store through
        // the vectors may alias their headers), and a bucket masked by the slice's own length
        // needs no bounds check: 8 instructions a byte of the base instead of 14, and this
        // runs over the whole base on every write whose bytes moved.
        let head: &mut [u32] = head;
        let mask = head.len() - 1;
        for ((i, w), p) in bytes.windows(4).enumerate().zip(prev.iter_mut()) {
            let h = Self::bucket(gram(w, 0), buckets) & mask;
            if let Some(slot) = head.get_mut(h) {
                *p = *slot;
                *slot = i as u32 + 1;
            }
        }
        self.built = true;
    }

    fn bucket(g: u32, buckets: usize) -> usize {
        (g.wrapping_mul(0x9E37_79B1) >> 8) as usize & (buckets - 1)
    }

    /// The longest match of `new[at..]` in the base among the chain's candidates, the first
    /// of them if several are as long, or `None` if none is at least `floor` bytes long (the
    /// caller extends it back and keeps it if it is long enough).
    fn find(&mut self, new: &[u8], at: usize, floor: usize) -> Option<(usize, usize)> {
        if at + 4 > new.len() {
            return None;
        }
        if !self.built {
            self.build();
        }
        let Chains { head, prev } = &*self.chains;
        let want = &new[at..];
        let mut cand = head[Self::bucket(gram(new, at), head.len())];
        let mut best: Option<(usize, usize)> = None;
        // A candidate must be longer than this; with a floor, the one-byte check below rules
        // out the short ones at once.
        let mut best_len = floor.saturating_sub(1);
        for _ in 0..MAX_CHAIN {
            if cand == 0 {
                break;
            }
            let pos = cand as usize - 1;
            let have = self.bytes.get(pos..).unwrap_or_default();
            // A candidate longer than the best so far agrees with `want` at the best's
            // length too: one byte rules most candidates out before the comparison is set
            // up (a record's grams repeat, so a chain holds many candidates that match for
            // a few bytes and no longer). The same candidate wins as without the check.
            if have
                .get(best_len)
                .is_some_and(|b| want.get(best_len) == Some(b))
            {
                let len = common(have, want);
                if len > best_len {
                    best = Some((pos, len));
                    best_len = len;
                }
            }
            cand = prev.get(pos).copied().unwrap_or(0);
        }
        best
    }

    fn delta(&mut self, new: &[u8], limit: usize) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(64);
        let mut lit = 0; // start of the pending insert
        let mut i = 0;
        let mut aligned = 0; // the base position new[i] lines up with
        while i < new.len() {
            // Most bytes of a run of misses differ at once: their first byte is looked at
            // before the comparison is set up.
            let here = match self.bytes.get(aligned..) {
                Some(b) if b.first() == Some(&new[i]) => common(b, &new[i..]),
                _ => 0,
            };
            // The hash chain is asked at every FIND_STEP-th byte of a miss only: a copy it
            // can find is at least MIN_FOUND long, so one of its grams starts at such a
            // byte, and the copy is then extended back to where it really starts.
            let found = if here >= MIN_ALIGNED {
                Some((i, aligned, here))
            } else if (i - lit) % FIND_STEP == 0 {
                // Extended back over at most the `i - lit` pending bytes, a match shorter than
                // this floor stays under MIN_FOUND: the lookup need not consider it.
                let floor = MIN_FOUND.saturating_sub(i - lit);
                self.find(new, i, floor).and_then(|(from, len)| {
                    let (mut at, mut from, mut len) = (i, from, len);
                    while at > lit && from > 0 && new[at - 1] == self.bytes[from - 1] {
                        at -= 1;
                        from -= 1;
                        len += 1;
                    }
                    (len >= MIN_FOUND).then_some((at, from, len))
                })
            } else {
                None
            };
            let Some((at, from, len)) = found else {
                i += 1;
                aligned += 1;
                // Through the run of misses to the next byte that could start a copy: one
                // whose aligned byte agrees, or where the hash chain is asked. The limit is
                // checked once at its end (the pending bytes only grow until then).
                while i < new.len()
                    && (i - lit) % FIND_STEP != 0
                    && self.bytes.get(aligned) != Some(&new[i])
                {
                    i += 1;
                    aligned += 1;
                }
                if out.len() + (i - lit) > limit {
                    return None;
                }
                continue;
            };
            insert(&mut out, &new[lit..at]);
            varint(&mut out, ((len as u64) << 1) | 1);
            varint(&mut out, from as u64);
            i = at + len;
            aligned = from + len;
            lit = i;
            if out.len() > limit {
                return None;
            }
        }
        insert(&mut out, &new[lit..]);
        (out.len() <= limit).then_some(out)
    }
}

/// The length of the common prefix of `a` and `b`: eight bytes at a time while they agree
/// (most of a record lines up with its base, so this runs over hundreds of bytes a write),
/// and the first differing byte of a word found from the word's difference, not byte by
/// byte.
fn common(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let word = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
    let mut i = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let differ = word(x) ^ word(y);
        if differ != 0 {
            // Little-endian: the lowest set bit is in the first byte that differs.
            return i + (differ.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn insert(out: &mut Vec<u8>, bytes: &[u8]) {
    if !bytes.is_empty() {
        varint(out, (bytes.len() as u64) << 1);
        out.extend_from_slice(bytes);
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(d: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *d.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Rebuilds the bytes `delta` describes from `base`; `None` if it does not fit the base.
pub(crate) fn apply(base: &[u8], delta: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(base.len() + delta.len());
    let mut at = 0;
    while at < delta.len() {
        let head = read_varint(delta, &mut at)?;
        let len = usize::try_from(head >> 1).ok()?;
        let part = if head & 1 == 1 {
            let from = usize::try_from(read_varint(delta, &mut at)?).ok()?;
            base.get(from..from.checked_add(len)?)?
        } else {
            let part = delta.get(at..at.checked_add(len)?)?;
            at += len;
            part
        };
        out.extend_from_slice(part);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers below `n` from a small xorshift seeded with `x`: the tests need varied edits,
    /// not a particular generator.
    fn below_from(mut x: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n.max(1) as u64) as usize
        }
    }

    fn round_trip(base: &[u8], new: &[u8]) -> usize {
        let d = delta(base, new);
        assert_eq!(apply(base, &d).as_deref(), Some(new), "delta {d:?}");
        d.len()
    }

    #[test]
    fn the_common_prefix_is_the_plain_one_at_every_length_and_offset() {
        let a: Vec<u8> = (0..40u8).collect();
        for len in 0..a.len() {
            for at in 0..=len {
                let mut b = a[..len].to_vec();
                if at < len {
                    b[at] ^= 0xff;
                }
                let plain = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
                assert_eq!(common(&a, &b), plain, "len {len}, differs at {at}");
                assert_eq!(common(&b, &a), plain, "len {len}, differs at {at}");
            }
        }
    }

    #[test]
    fn deltas_rebuild_the_new_bytes_and_are_small_for_small_changes() {
        let base: Vec<u8> = (0..700u32).map(|i| (i * 7919 % 251) as u8).collect();
        assert!(round_trip(&base, &base) <= 4);
        assert_eq!(round_trip(&base, &[]), 0);
        assert_eq!(round_trip(&[], b"abc"), 4);
        round_trip(b"ab", b"abcdefgh");
        // Changed in place (timestamps): a few bytes per change.
        let mut changed = base.clone();
        for at in [3, 100, 101, 102, 400, 699] {
            changed[at] ^= 0x55;
        }
        assert!(round_trip(&base, &changed) < 40);
        // Inserted and dropped in the middle (a queue entry): the rest is still copied.
        let mut shifted = base.clone();
        shifted.splice(200..200, b"a new queue entry".iter().copied());
        shifted.drain(500..540);
        assert!(round_trip(&base, &shifted) < 40);
        // Nothing in common: everything inserted, still correct.
        let other: Vec<u8> = (0..300u32).map(|i| (i * 31 % 256) as u8).collect();
        round_trip(&base, &other);
        // Repetitive bytes.
        round_trip(&[0u8; 500], &[0u8; 900]);
        round_trip(
            &[1, 2, 1, 2, 1, 2, 1, 2, 1, 2],
            &[2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2],
        );
    }

    #[test]
    fn random_edits_round_trip_and_in_place_ones_stay_small() {
        let mut next = below_from(0x9E37_79B9_7F4A_7C15);
        for round in 0..2_000 {
            let len = 1 + next(900);
            // Record-like bytes: runs of repeated headers and varied values.
            let base: Vec<u8> = (0..len)
                .map(|i| {
                    if i % 11 < 3 {
                        0xa0 + (i % 3) as u8
                    } else {
                        next(256) as u8
                    }
                })
                .collect();
            let mut new = base.clone();
            let mut in_place = true;
            for _ in 0..1 + next(6) {
                let at = next(new.len() + 1);
                match next(3) {
                    0 if at < new.len() => {
                        let end = (at + 1 + next(9)).min(new.len());
                        for b in &mut new[at..end] {
                            *b = b.wrapping_add(1 + next(255) as u8);
                        }
                    }
                    1 => {
                        in_place = false;
                        let add: Vec<u8> = (0..1 + next(40)).map(|_| next(256) as u8).collect();
                        new.splice(at..at, add);
                    }
                    _ => {
                        in_place = false;
                        let end = (at + next(40)).min(new.len());
                        new.drain(at..end);
                    }
                }
            }
            let size = round_trip(&base, &new);
            if in_place {
                assert!(
                    size <= 6 * 16 + 8,
                    "round {round}: {size} bytes for in-place edits"
                );
            }
        }
    }

    #[test]
    fn a_delta_past_its_limit_is_given_up_and_one_within_it_is_the_whole_delta() {
        let mut next = below_from(0x2545_F491_4F6C_DD1D);
        for _ in 0..500 {
            let base: Vec<u8> = (0..1 + next(900)).map(|_| next(256) as u8).collect();
            let mut new = base.clone();
            for _ in 0..next(30) {
                let at = next(new.len() + 1);
                let add: Vec<u8> = (0..1 + next(60)).map(|_| next(256) as u8).collect();
                new.splice(at..at, add);
            }
            let whole = delta(&base, &new);
            assert_eq!(apply(&base, &whole).as_deref(), Some(&new[..]));
            let limit = next(whole.len() + 10);
            match delta_within(&base, &new, limit) {
                Some(d) => {
                    assert!(d.len() <= limit);
                    assert_eq!(d, whole);
                }
                None => assert!(whole.len() > limit, "{} <= {limit}", whole.len()),
            }
        }
    }

    #[test]
    fn a_copy_is_found_whole_between_the_lookups_of_a_run_of_misses() {
        // Copies of every length from MIN_FOUND, moved away from their aligned place and
        // preceded by misses of every length: each is sent as one copy, never as bytes.
        let base: Vec<u8> = (0..600u32).map(|i| (i * 7919 % 251) as u8).collect();
        for len in MIN_FOUND..40 {
            for misses in 0..9 {
                let mut new: Vec<u8> = (0..misses).map(|k| 0xf0 ^ k as u8).collect();
                new.extend_from_slice(&base[300..300 + len]);
                let d = delta(&base, &new);
                assert_eq!(apply(&base, &d).as_deref(), Some(&new[..]));
                assert!(
                    d.len() <= misses + 1 + 4,
                    "len {len}, misses {misses}: {} bytes ({d:?})",
                    d.len()
                );
            }
        }
    }

    /// `len` record-like bytes: a repeating 5-byte header every 13 bytes (a record's grams
    /// repeat), the rest random, of 4 values only if `few` (long chains of short matches).
    fn record_like(next: &mut impl FnMut(usize) -> usize, len: usize, few: bool) -> Vec<u8> {
        (0..len)
            .map(|i| match i % 13 {
                0..=4 => [0xcf, 0, 0, 1, 0x9a][i % 13],
                _ => next(if few { 4 } else { 256 }) as u8,
            })
            .collect()
    }

    /// The chain walk as it was before candidates were ruled out by one byte: every
    /// candidate compared whole, the first of the longest kept.
    fn find_comparing_every_candidate(
        index: &mut Index,
        new: &[u8],
        at: usize,
    ) -> Option<(usize, usize)> {
        if at + 4 > new.len() {
            return None;
        }
        if !index.built {
            index.build();
        }
        let Chains { head, prev } = &*index.chains;
        let mut cand = head[Index::bucket(gram(new, at), head.len())];
        let mut best: Option<(usize, usize)> = None;
        for _ in 0..MAX_CHAIN {
            if cand == 0 {
                break;
            }
            let pos = cand as usize - 1;
            let len = common(&index.bytes[pos..], &new[at..]);
            if len > best.map_or(0, |b| b.1) {
                best = Some((pos, len));
            }
            cand = prev[pos];
        }
        best
    }

    #[test]
    fn a_lookup_finds_the_candidate_a_comparison_of_every_candidate_finds() {
        // Record-like bytes whose grams repeat (long chains of short matches), edited, and
        // every position of the edited bytes looked up both ways.
        let mut next = below_from(0x2545_F491_4F6C_DD1D);
        let mut chains = Chains::default();
        for round in 0..300 {
            let len = 8 + next(900);
            let base = record_like(&mut next, len, round % 2 == 0);
            let mut new = base.clone();
            for _ in 0..next(8) {
                let at = next(new.len() + 1);
                let add: Vec<u8> = (0..1 + next(20)).map(|_| next(256) as u8).collect();
                new.splice(at..at, add);
            }
            let mut index = Index {
                bytes: &base,
                chains: &mut chains,
                built: false,
            };
            for at in 0..new.len() {
                let plain = find_comparing_every_candidate(&mut index, &new, at);
                for floor in [0, 1, 4, MIN_FOUND] {
                    // Below the floor, the plain walk's longest is no answer.
                    let want = plain.filter(|&(_, len)| len >= floor);
                    assert_eq!(
                        index.find(&new, at, floor),
                        want,
                        "round {round}, at {at}, floor {floor}"
                    );
                }
            }
        }
    }

    /// The encoder as plainly as it can be written: every byte of a run of misses looked
    /// at, every lookup comparing every candidate whole, the limit checked at every byte
    /// (the reference for the lookups' floors and the skip through a run of misses, which
    /// must not change a byte, nor which deltas are given up).
    fn plain_delta(base: &[u8], new: &[u8], limit: usize) -> Option<Vec<u8>> {
        let mut chains = Chains::default();
        let mut index = Index {
            bytes: base,
            chains: &mut chains,
            built: false,
        };
        let (mut out, mut lit, mut i, mut aligned) = (Vec::new(), 0, 0, 0);
        while i < new.len() {
            let here = common(base.get(aligned..).unwrap_or_default(), &new[i..]);
            let mut found = (here >= MIN_ALIGNED).then_some((i, aligned, here));
            if found.is_none() && (i - lit) % FIND_STEP == 0 {
                if let Some((mut from, mut len)) =
                    find_comparing_every_candidate(&mut index, new, i)
                {
                    let mut at = i;
                    while at > lit && from > 0 && new[at - 1] == base[from - 1] {
                        (at, from, len) = (at - 1, from - 1, len + 1);
                    }
                    found = (len >= MIN_FOUND).then_some((at, from, len));
                }
            }
            match found {
                None => (i, aligned) = (i + 1, aligned + 1),
                Some((at, from, len)) => {
                    insert(&mut out, &new[lit..at]);
                    varint(&mut out, ((len as u64) << 1) | 1);
                    varint(&mut out, from as u64);
                    (i, aligned, lit) = (at + len, from + len, at + len);
                }
            }
            if out.len() + (i - lit) > limit {
                return None;
            }
        }
        insert(&mut out, &new[lit..]);
        (out.len() <= limit).then_some(out)
    }

    /// The encoder's deltas are the plain encoder's, byte for byte: record-like bases
    /// (repeating headers, few distinct bytes in half the rounds), edited in place, shifted
    /// and cut, and limits around each delta's length.
    #[test]
    fn a_delta_is_the_plain_encoder_s_byte_for_byte() {
        let mut next = below_from(0x6A09_E667_F3BC_C908);
        for round in 0..3_000 {
            let len = next(900);
            let base = record_like(&mut next, len, round % 2 == 0);
            let mut new = base.clone();
            for _ in 0..next(9) {
                let at = next(new.len() + 1);
                match next(3) {
                    0 => {
                        let end = (at + 1 + next(9)).min(new.len());
                        for b in &mut new[at..end] {
                            *b = b.wrapping_add(1 + next(255) as u8);
                        }
                    }
                    1 => {
                        let add: Vec<u8> = (0..1 + next(20)).map(|_| next(256) as u8).collect();
                        new.splice(at..at, add);
                    }
                    _ => {
                        let end = (at + next(40)).min(new.len());
                        new.drain(at..end);
                    }
                }
            }
            let plain = plain_delta(&base, &new, usize::MAX).unwrap_or_default();
            assert_eq!(delta(&base, &new), plain, "round {round}");
            for limit in (0..plain.len() + 2).step_by(1 + plain.len() / 16) {
                assert_eq!(
                    delta_within(&base, &new, limit),
                    plain_delta(&base, &new, limit),
                    "round {round}, limit {limit}"
                );
            }
        }
    }

    /// The chains as the plainest code builds them: every 4-byte gram of the base, in order,
    /// put at the head of its bucket's chain.
    fn plain_chains(base: &[u8]) -> (Vec<u32>, Vec<u32>) {
        let buckets = base.len().next_power_of_two().max(64);
        let mut head = vec![0u32; buckets];
        let mut prev = vec![0u32; base.len().saturating_sub(3)];
        for i in 0..prev.len() {
            let g = u32::from_le_bytes([base[i], base[i + 1], base[i + 2], base[i + 3]]);
            let h = Index::bucket(g, buckets);
            prev[i] = head[h];
            head[h] = i as u32 + 1;
        }
        (head, prev)
    }

    /// The build is the plain one's, table for table, over bases of every small length and
    /// record-like ones, one after another in the same reused tables (a shorter base after a
    /// longer one leaves the tail of `prev` unread).
    #[test]
    fn the_chains_are_the_plain_build_s() {
        let mut next = below_from(0x1405_7B7E_F767_814F);
        let mut chains = Chains::default();
        for round in 0..400 {
            let len = if round < 80 { round } else { next(3000) };
            let base = record_like(&mut next, len, round % 2 == 0);
            let mut index = Index {
                bytes: &base,
                chains: &mut chains,
                built: false,
            };
            index.build();
            let (head, prev) = plain_chains(&base);
            assert_eq!(chains.head, head, "round {round}, {len} bytes");
            assert_eq!(
                &chains.prev[..prev.len()],
                &prev[..],
                "round {round}, {len} bytes"
            );
        }
    }

    #[test]
    fn a_delta_that_does_not_fit_its_base_is_refused() {
        let base = b"0123456789".to_vec();
        assert_eq!(apply(&base, &[(4 << 1) | 1, 8]), None, "copy past the end");
        assert_eq!(apply(&base, &[(4 << 1), b'a']), None, "insert past the end");
        assert_eq!(apply(&base, &[0x80]), None, "varint cut short");
        assert_eq!(apply(&base, &[0xff; 12]), None, "varint too long");
        assert_eq!(
            apply(&base, &[(2 << 1) | 1, 3]).as_deref(),
            Some(&b"34"[..])
        );
    }
}
