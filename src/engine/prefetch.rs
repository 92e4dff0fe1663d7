//! A hint to the CPU: start loading a value's cache lines now, because it will be read soon.
//!
//! At 10⁷ jobs the job and pilot tables hold gigabytes, so the first read of a job's record
//! when its end is handled waits on main memory (perf: the single largest stall of the run,
//! measured). The event loop knows the coming events before it handles the current one
//! ([`crate::engine::StagedQueue::ahead`]), and so what they will read; a prefetch lets the
//! loads overlap the current event's work. A hint never changes a result: it neither
//! faults nor writes, and a wrong guess only costs a cache line.

/// Ask for the cache lines of `value` (its first and its last byte, which cover every record
/// of up to two lines) to be loaded into every cache level. A no-op off x86-64.
///
/// A record that is one aligned line (a `Job`) is asked for once: a second prefetch of a line
/// already on its way still takes a slot of the CPU's few miss buffers.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (value as *const T).cast::<i8>();
        let last = first.wrapping_add(size_of::<T>().saturating_sub(1));
        let one_line = size_of::<T>() <= LINE && align_of::<T>() >= LINE;
        // SAFETY: PREFETCHT0 is only a hint: it never faults, reads nothing into the program
        // and writes nothing, whatever the address; both addresses lie inside `value` anyway.
        // SSE, which the intrinsic's `target_feature` names, is part of every x86-64 CPU.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(first);
            if !one_line {
                _mm_prefetch::<_MM_HINT_T0>(last);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// The cache line of x86-64 CPUs.
#[cfg(target_arch = "x86_64")]
const LINE: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefetch_changes_nothing() {
        let values = vec![[7_u64; 10]; 4];
        for v in &values {
            prefetch(v);
        }
        prefetch(&());
        assert!(values.iter().all(|v| v == &[7; 10]));
    }
}
