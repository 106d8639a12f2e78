//! Batching of streamed text into [`Token`](crate::events::EngineEvent::Token) events, so a
//! fast model cannot flood a listener: a batch is released when it reaches
//! [`TokenBatcher::MAX_BYTES`] or when [`TokenBatcher::MAX_AGE`] passed since the last release.

use std::time::{Duration, Instant};

/// Accumulates chunks.
pub struct TokenBatcher {
    buffer: String,
    last_release: Instant,
}

impl TokenBatcher {
    /// Release when the batch is this large.
    pub const MAX_BYTES: usize = 512;
    /// Release when this much time has passed since the last release.
    pub const MAX_AGE: Duration = Duration::from_millis(40);

    /// An empty batcher.
    pub fn new() -> Self {
        TokenBatcher {
            buffer: String::new(),
            last_release: Instant::now(),
        }
    }

    /// Add a chunk; returns a batch when one is due.
    pub fn push(&mut self, chunk: &str) -> Option<String> {
        self.push_at(chunk, Instant::now())
    }

    fn push_at(&mut self, chunk: &str, now: Instant) -> Option<String> {
        self.buffer.push_str(chunk);
        if self.buffer.len() >= Self::MAX_BYTES
            || now.duration_since(self.last_release) >= Self::MAX_AGE
        {
            self.flush_at(now)
        } else {
            None
        }
    }

    /// Release whatever is left.
    pub fn flush(&mut self) -> Option<String> {
        self.flush_at(Instant::now())
    }

    fn flush_at(&mut self, now: Instant) -> Option<String> {
        self.last_release = now;
        (!self.buffer.is_empty()).then(|| std::mem::take(&mut self.buffer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_small_chunks_become_few_batches_and_nothing_is_lost() {
        let mut b = TokenBatcher::new();
        let now = b.last_release;
        let mut out = Vec::new();
        for i in 0..10_000 {
            if let Some(batch) = b.push_at(&format!("{:02}", i % 100), now) {
                out.push(batch);
            }
        }
        out.extend(b.flush_at(now));
        let expected: String = (0..10_000).map(|i| format!("{:02}", i % 100)).collect();
        assert_eq!(out.concat(), expected, "every chunk, in order");
        assert_eq!(out.len(), 20_000 / TokenBatcher::MAX_BYTES + 1);
    }

    #[test]
    fn a_slow_stream_is_released_by_age() {
        let mut b = TokenBatcher::new();
        let start = b.last_release;
        assert_eq!(b.push_at("a", start), None);
        assert_eq!(
            b.push_at("b", start + TokenBatcher::MAX_AGE),
            Some("ab".into())
        );
    }
}
