//! Batching of streamed text into [`Token`](crate::events::EngineEvent::Token) events, so a
//! fast model cannot flood a listener: a batch is released when it reaches
//! [`TokenBatcher::MAX_BYTES`] or when [`TokenBatcher::MAX_AGE`] passed since the last release.
//! Each batch also says what it adds to the answer's prose (its text without tool calls, as the
//! parser reads them), so a front end never has to find calls in the text itself
//! ([`ProseTracker`]).

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

/// The prose of a streamed answer (its text without its tool calls, as
/// [`strip_calls`](crate::parser::strip_calls) reads them), told as additions.
#[derive(Debug, Default)]
pub struct ProseTracker {
    told: String,
}

impl ProseTracker {
    /// Nothing told yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The prose of `text` (the whole answer so far) against what was told: what it adds and
    /// `false`, or, when text told earlier turned out to belong to a call (a tag still
    /// arriving was shown as text), the whole prose and `true`.
    pub fn advance(&mut self, text: &str) -> (String, bool) {
        let prose = crate::parser::strip_calls(text);
        let told = std::mem::take(&mut self.told);
        let step = match prose.strip_prefix(told.as_str()) {
            Some(added) => (added.to_string(), false),
            None => (prose.clone(), true),
        };
        self.told = prose;
        step
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

    /// Fed an answer in every split, the additions add up to the answer's prose, calls (XML
    /// and JSON) left out, and a reset happens only where a call's tag was still arriving.
    #[test]
    fn prose_additions_add_up_to_the_answer_without_its_calls() {
        let answer = "Let me look.\n<tool_call><name>web_search</name><params><query>rust</query></params></tool_call>\nThen fetch.\n<tool_call>{\"name\": \"web_fetch\", \"arguments\": {\"url\": \"https://a.example/\"}}</tool_call>\nDone.";
        let expected = crate::parser::strip_calls(answer);
        assert!(!expected.contains('<'), "{expected}");
        assert!(expected.starts_with("Let me look.") && expected.ends_with("Done."));
        for step in 1..=answer.len() {
            let mut tracker = ProseTracker::new();
            let mut shown = String::new();
            let mut at = 0;
            while at < answer.len() {
                let mut end = (at + step).min(answer.len());
                while !answer.is_char_boundary(end) {
                    end += 1;
                }
                let (prose, reset) = tracker.advance(&answer[..end]);
                if reset {
                    shown = prose;
                } else {
                    shown.push_str(&prose);
                }
                at = end;
            }
            assert_eq!(shown, expected, "chunks of {step} bytes");
        }
    }

    #[test]
    fn a_tag_shown_as_text_is_taken_back_once_it_is_a_call() {
        let mut tracker = ProseTracker::new();
        assert_eq!(
            tracker.advance("Sure. <tool_ca"),
            ("Sure. <tool_ca".into(), false)
        );
        let (prose, reset) = tracker.advance("Sure. <tool_call><name>x</name></tool_call>");
        assert!(reset);
        assert_eq!(prose, "Sure.");
        let (added, reset) = tracker.advance("Sure. <tool_call><name>x</name></tool_call> Ok");
        assert!(!reset);
        assert_eq!(format!("Sure.{added}"), "Sure.  Ok");
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
