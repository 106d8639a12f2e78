//! Giving the allocator's free memory back to the system when the app goes idle.
//!
//! glibc's allocator keeps the pages it freed (startup's parsing and copying, a run's streamed
//! answer) mapped, so an idle window goes on holding them: about 2 MB after startup, measured
//! with `scripts/measure_app.sh`. `malloc_trim` returns the free pages. It runs on its own
//! thread, once things settle: a couple of seconds after the last request (the UI's first
//! render, the end of a run), so a burst of work is not interrupted.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long after the last request the trim runs.
const SETTLE: Duration = Duration::from_secs(2);

static REQUESTS: OnceLock<Mutex<Sender<()>>> = OnceLock::new();

/// Ask for free memory to be returned once the app has been quiet for a moment.
pub fn release_when_idle() {
    let sender = REQUESTS.get_or_init(|| {
        let (tx, rx) = channel::<()>();
        let spawned = std::thread::Builder::new()
            .name("memory-release".into())
            .spawn(move || {
                // Wait for a request, then until none came for SETTLE.
                while rx.recv().is_ok() {
                    loop {
                        match rx.recv_timeout(SETTLE) {
                            Ok(()) => continue,
                            Err(RecvTimeoutError::Timeout) => break,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    release_free_memory();
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the memory release thread: {e}");
        }
        Mutex::new(tx)
    });
    let _ = sender.lock().unwrap_or_else(|e| e.into_inner()).send(());
}

/// Return the allocator's free pages to the system now.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: malloc_trim only walks glibc's own heap structures under their locks; it takes
    // no pointer from us and is safe to call from any thread at any time.
    let released = unsafe { libc::malloc_trim(0) };
    tracing::debug!(
        released = released != 0,
        "returned free heap memory to the system"
    );
}

/// Other allocators (macOS, Windows, musl) return free memory on their own.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    fn resident_anon_kb() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("RssAnon:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    fn free_heap_pages_go_back_to_the_system() {
        // 64 MB in blocks small enough to come from the heap (not mmap), each followed by a
        // small block that stays: freeing the big ones leaves holes the allocator cannot give
        // back by shrinking its heap, so they stay resident until they are released.
        let mut blocks = Vec::new();
        let mut pins = Vec::new();
        for _ in 0..2048 {
            blocks.push(vec![1u8; 32 * 1024]);
            pins.push(vec![1u8; 64]);
        }
        let filled = resident_anon_kb();
        drop(blocks);
        let freed = resident_anon_kb();
        release_free_memory();
        let released = resident_anon_kb();
        assert_eq!(pins.len(), 2048);
        assert!(
            freed > released + 32 * 1024,
            "filled {filled} kB, freed {freed} kB, released {released} kB"
        );
        // A burst of requests only queues up (the thread trims once things settle).
        for _ in 0..1000 {
            release_when_idle();
        }
    }
}
