//! Performance hints with no effect on results.

/// Asks the CPU to bring the cache line(s) holding `value` closer. Models call it for state they
/// will touch a few steps later, so that cache misses overlap instead of queueing up.
///
/// A value no bigger than its alignment never straddles two lines (for alignments up to a
/// line); a bigger one, such as a 20-byte slab entry at a 4-byte boundary, may, so its last byte
/// is fetched too.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    let start = (value as *const T).cast::<u8>();
    prefetch_address(start);
    if std::mem::size_of::<T>() > std::mem::align_of::<T>() {
        prefetch_address(start.wrapping_add(std::mem::size_of::<T>() - 1));
    }
}

/// [`prefetch`] for every cache line of `value`, for a structure bigger than one line.
#[inline(always)]
pub fn prefetch_all<T>(value: &T) {
    let base = (value as *const T).cast::<u8>();
    let mut offset = 0;
    while offset < std::mem::size_of::<T>() {
        prefetch_address(base.wrapping_add(offset));
        offset += 64;
    }
}

#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, even for an invalid address, and has
    // no observable effect on memory. `_mm_prefetch` is unsafe only because it is declared with
    // `#[target_feature(enable = "sse")]`, which every x86_64 target has.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
