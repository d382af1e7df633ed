//! Gives the memory an analysis freed back to the operating system once the server is idle.
//!
//! An upload's analysis builds its groups' history windows (tens of thousands of points, some
//! tens of MB at 18 cells) and frees them when it is done. glibc's allocator keeps freed memory
//! in the arena of the thread that used it (one arena per worker thread, up to 8 per core), so
//! after a burst of uploads the process stays at its high-water mark although nothing is live:
//! `history_growth` measured 183 MiB at rest after 300 commits (BENCHMARKS.md, session 22).
//! `malloc_trim(0)` returns every arena's free pages (glibc ≥ 2.8 also releases whole free pages
//! inside a heap, not only its top). It takes each arena's lock in turn, so it runs only when
//! the work that allocated has stopped: [`note_work`] counts finished analyses and scans, and
//! [`release_when_idle`] trims once after a period in which the count stopped moving.
//!
//! Elsewhere than glibc (musl, macOS) the trim is a no-op: those allocators return memory by
//! their own rules.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Analyses and scans finished since the process started.
static WORK_DONE: AtomicU64 = AtomicU64::new(0);

/// Counts one finished unit of allocation-heavy work (an analysis, a change-point scan).
pub fn note_work() {
    WORK_DONE.fetch_add(1, Ordering::Relaxed);
}

/// Checks every `quiet`: when work was done since the last trim and none finished during the
/// last `quiet`, returns free memory to the operating system ([`trim`]). Runs until aborted:
/// `crate::serve::serve_with` spawns one per served application and aborts it when serving
/// ends (several servers in one process, as in tests, only trim more often).
pub async fn release_when_idle(quiet: Duration) {
    let mut trimmed_at = WORK_DONE.load(Ordering::Relaxed);
    let mut seen = trimmed_at;
    let mut tick = tokio::time::interval(quiet);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = WORK_DONE.load(Ordering::Relaxed);
        if quiet_after_work(now, seen, trimmed_at) {
            let released = tokio::task::spawn_blocking(trim).await.unwrap_or(false);
            tracing::debug!(released, "returned free memory to the operating system");
            trimmed_at = now;
        }
        seen = now;
    }
}

/// Whether to trim: the work count `now` has not moved since the last check (`seen`) but has
/// since the last trim (`trimmed_at`).
fn quiet_after_work(now: u64, seen: u64, trimmed_at: u64) -> bool {
    now == seen && now != trimmed_at
}

/// Returns the allocator's free memory to the operating system; `true` when some was
/// released. glibc only; elsewhere `false`.
pub fn trim() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim has no preconditions; it locks each arena while it trims it.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Allocations of at least this many bytes get pages of their own ([`map_large_allocations`]).
pub const MMAP_THRESHOLD_BYTES: usize = 4 << 20;

/// Makes glibc give every allocation of [`MMAP_THRESHOLD_BYTES`] or more pages of its own
/// (`mmap`), returned to the operating system the moment it is freed (and grown by `mremap`,
/// without a copy). glibc's default threshold starts at 128 KiB but rises to the size of each
/// large block freed (up to 32 MiB), after which such blocks come from the arenas and their
/// pages stay with the process: a 25 MiB `--save-detailed` upload (its body, the file's text,
/// the parser's buffer: about 96 MB live at once) left the server 132–146 MiB above its rest.
/// Setting the threshold fixes it (`mallopt(3)`). Call once, before the server allocates much.
/// glibc only; elsewhere a no-op.
pub fn map_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets an allocator parameter; it has no memory preconditions.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES as libc::c_int);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_once_after_a_burst_and_never_while_work_goes_on() {
        // (count at this check, count at the previous check, count at the last trim)
        assert!(!quiet_after_work(0, 0, 0), "no work since start");
        assert!(
            !quiet_after_work(3, 1, 0),
            "work finished during the last period"
        );
        assert!(quiet_after_work(3, 3, 0), "quiet after work");
        assert!(
            !quiet_after_work(3, 3, 3),
            "already trimmed after that work"
        );
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_small_allocations_are_released() {
        // 64 MiB in 4 KiB blocks (below the mmap threshold, so they live in an arena), then
        // one block above them that stays live: free() alone only ever shrinks a heap from its
        // top, so the freed 64 MiB below the live block stay until a trim releases their pages.
        let blocks: Vec<Vec<u8>> = (0..16_384).map(|i| vec![i as u8; 4096]).collect();
        let live = vec![1u8; 4096];
        drop(blocks);
        assert!(trim());
        assert_eq!(live[4095], 1);
    }
}
