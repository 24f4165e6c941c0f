//! Performance hints with no effect on results.

/// Asks the CPU to bring the cache line holding `value` closer. Models call it for state they
/// will touch a few steps later, so that cache misses overlap instead of queueing up.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, even for an invalid address, and has
    // no observable effect on memory. `_mm_prefetch` is unsafe only because it is declared with
    // `#[target_feature(enable = "sse")]`, which every x86_64 target has.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
