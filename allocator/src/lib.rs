//! The process's global allocator: mimalloc, called the way std's own `System` allocator calls
//! malloc. The `horst` binary sets it (`src/main.rs`), and so does the queue benchmark that
//! stands in for the binary's API and worker (`worker/examples/queue_bench.rs`).
//!
//! A session apply is allocation-heavy (JSON in, JSON out, MessagePack to Redis): with
//! glibc's malloc about 45 % of the API's CPU per action went to malloc and free, and
//! mimalloc's thread-local heaps cut that. The `mimalloc` crate's own `GlobalAlloc` sends
//! every request to `mi_malloc_aligned`, and mimalloc 3 takes that call's fast path only
//! while the size class's current page has a free block: when it runs out, any size that is
//! not a power of two (24, 48, 80 bytes...) goes to the over-allocating path, which takes a
//! block of `size + align - 1` and marks its page as holding interior pointers. In the
//! sessions benchmark that was 79 allocations an action at about 320 instructions each.
//!
//! Every mimalloc block is aligned to 8 bytes, and a block whose size is a multiple of 16 to
//! 16 (a page's first block is 16-aligned, and the size classes from 64 bytes up are
//! multiples of 16). So an alignment of up to 8, or of 16 at a size that is a multiple of 16
//! (every Rust type of that alignment), takes plain `mi_malloc`; only the rest needs the
//! aligned entry points. That is `System`'s rule with glibc's malloc (`MIN_ALIGN`), with
//! mimalloc's guarantees.

// Dependencies nobody uses warn (clippy -D warnings in CI makes it an error).
#![cfg_attr(not(test), warn(unused_crate_dependencies))]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// Whether a plain (unaligned) call returns a block aligned to `align` for `size` bytes.
fn plain_is_aligned(align: usize, size: usize) -> bool {
    align <= 8 || (align == 16 && size.is_multiple_of(16))
}

pub struct MiMalloc;

// SAFETY: every method forwards to mimalloc, which returns memory aligned as the layout
// asks (the aligned calls), or as `plain_is_aligned` promises (the plain ones); `mi_free`
// frees a block of either kind.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a plain or aligned allocation of the layout's size (see above).
        unsafe {
            if plain_is_aligned(layout.align(), layout.size()) {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`, zeroed.
        unsafe {
            if plain_is_aligned(layout.align(), layout.size()) {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator.
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator with `layout`; the new block is aligned as
        // `alloc` would align one of `new_size` bytes.
        unsafe {
            if plain_is_aligned(layout.align(), layout.size())
                && plain_is_aligned(layout.align(), new_size)
            {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every alignment a Rust type may ask for, at sizes around each, through every entry
    /// point: the block is aligned, usable to its last byte, zeroed when asked, and keeps its
    /// bytes through a reallocation that grows or shrinks it.
    #[test]
    fn blocks_are_aligned_usable_and_kept_through_realloc() {
        let a = MiMalloc;
        for shift in 0..=12 {
            let align = 1usize << shift;
            for size in [
                align,
                align + 1,
                3 * align,
                align * 8 + 5,
                24,
                40,
                100,
                5000,
            ] {
                let size = size.max(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; each block is freed with the layout it was made with.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                    std::ptr::write_bytes(p, 0xAB, size);

                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed: size {size} align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                    a.dealloc(z, layout);

                    // Grown, then shrunk back: the bytes stay, the block stays aligned.
                    let grown = size * 3 + 7;
                    let q = a.realloc(p, layout, grown);
                    assert_eq!(q as usize % align, 0, "grown to {grown}, align {align}");
                    assert!(std::slice::from_raw_parts(q, size)
                        .iter()
                        .all(|b| *b == 0xAB));
                    let big = Layout::from_size_align(grown, align).unwrap();
                    let r = a.realloc(q, big, size);
                    assert_eq!(r as usize % align, 0, "shrunk to {size}, align {align}");
                    assert!(std::slice::from_raw_parts(r, size)
                        .iter()
                        .all(|b| *b == 0xAB));
                    a.dealloc(r, layout);
                }
            }
        }
    }

    #[test]
    fn plain_calls_only_where_mimalloc_aligns_them_anyway() {
        assert!(plain_is_aligned(8, 24));
        assert!(plain_is_aligned(8, 4), "the smallest block is 8 bytes");
        assert!(plain_is_aligned(16, 48));
        assert!(plain_is_aligned(1, 1));
        assert!(!plain_is_aligned(16, 17), "a 24-byte block: 8-aligned only");
        assert!(!plain_is_aligned(32, 64), "over 16: the aligned call");
    }
}
