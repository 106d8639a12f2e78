//! Bounds on what a peer's stream can make the engine hold in memory.
//!
//! A broken or hostile server can send one line that never ends, an event that never
//! dispatches, or an answer that never stops. [`StreamLimits`] caps each; a reader that hits
//! one fails with a [`LimitExceeded`] naming the limit, so the caller can say which setting to
//! raise. Model profiles carry them (`limits:` in `models.yaml`); other streamed peers (tool
//! output, MCP messages) are meant to use the same type.

use serde::{Deserialize, Serialize};

/// The limits of one stream. Every field is in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct StreamLimits {
    /// Longest line (of an event stream) held while waiting for its end.
    pub max_line_bytes: u32,
    /// Largest event (all its `data:` lines together).
    pub max_event_bytes: u32,
    /// Longest whole answer.
    pub max_answer_bytes: u32,
}

impl StreamLimits {
    /// The smallest value a limit may be set to.
    pub const MIN_BYTES: u32 = 1024;
    /// The field names, as written in `models.yaml`.
    pub const FIELDS: [&'static str; 3] = ["max_line_bytes", "max_event_bytes", "max_answer_bytes"];

    /// The value of the limit called `field` (one of [`StreamLimits::FIELDS`]).
    pub fn get(&self, field: &str) -> Option<u32> {
        match field {
            "max_line_bytes" => Some(self.max_line_bytes),
            "max_event_bytes" => Some(self.max_event_bytes),
            "max_answer_bytes" => Some(self.max_answer_bytes),
            _ => None,
        }
    }

    /// Set the limit called `field`; false for an unknown field.
    pub fn set(&mut self, field: &str, value: u32) -> bool {
        match field {
            "max_line_bytes" => self.max_line_bytes = value,
            "max_event_bytes" => self.max_event_bytes = value,
            "max_answer_bytes" => self.max_answer_bytes = value,
            _ => return false,
        }
        true
    }

    /// The first limit below [`StreamLimits::MIN_BYTES`], with its value.
    pub fn too_small(&self) -> Option<(&'static str, u32)> {
        Self::FIELDS
            .into_iter()
            .map(|f| (f, self.get(f).unwrap_or(0)))
            .find(|(_, v)| *v < Self::MIN_BYTES)
    }

    /// Fail with [`Limit::Line`] when a line has grown to `len` bytes.
    pub fn line(&self, len: usize) -> Result<(), LimitExceeded> {
        check(Limit::Line, len, self.max_line_bytes)
    }

    /// Fail with [`Limit::Event`] when an event has grown to `len` bytes.
    pub fn event(&self, len: usize) -> Result<(), LimitExceeded> {
        check(Limit::Event, len, self.max_event_bytes)
    }

    /// Fail with [`Limit::Answer`] when an answer has grown to `len` bytes.
    pub fn answer(&self, len: usize) -> Result<(), LimitExceeded> {
        check(Limit::Answer, len, self.max_answer_bytes)
    }
}

impl Default for StreamLimits {
    /// Generous: far above anything a working model server sends (an event is usually under a
    /// kilobyte, an answer under a megabyte), small enough that a runaway stream costs little.
    fn default() -> Self {
        StreamLimits {
            max_line_bytes: 1024 * 1024,
            max_event_bytes: 4 * 1024 * 1024,
            max_answer_bytes: 16 * 1024 * 1024,
        }
    }
}

fn check(limit: Limit, len: usize, max: u32) -> Result<(), LimitExceeded> {
    if len > max as usize {
        Err(LimitExceeded { limit, max })
    } else {
        Ok(())
    }
}

/// Which limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`StreamLimits::max_line_bytes`].
    Line,
    /// [`StreamLimits::max_event_bytes`].
    Event,
    /// [`StreamLimits::max_answer_bytes`].
    Answer,
}

impl Limit {
    /// The field's name in `models.yaml`.
    pub fn field(self) -> &'static str {
        match self {
            Limit::Line => "max_line_bytes",
            Limit::Event => "max_event_bytes",
            Limit::Answer => "max_answer_bytes",
        }
    }
}

/// A stream went past one of its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} longer than {} (limit `{}`)", self.what(), human_bytes(self.max), self.limit.field())]
pub struct LimitExceeded {
    /// The limit hit.
    pub limit: Limit,
    /// Its value.
    pub max: u32,
}

impl LimitExceeded {
    /// What was too long, for a sentence: "a line", "an event", "an answer".
    pub fn what(&self) -> &'static str {
        match self.limit {
            Limit::Line => "a line",
            Limit::Event => "an event",
            Limit::Answer => "an answer",
        }
    }
}

/// `1 MiB`, `4 KiB`, `1500 bytes`.
pub fn human_bytes(n: u32) -> String {
    const KIB: u32 = 1024;
    const MIB: u32 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_limit_names_its_field() {
        let l = StreamLimits::default();
        assert!(l.line(1024 * 1024).is_ok());
        let e = l.line(1024 * 1024 + 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a line longer than 1 MiB (limit `max_line_bytes`)"
        );
        assert_eq!(l.event(usize::MAX).unwrap_err().limit, Limit::Event);
        assert_eq!(
            l.answer(usize::MAX).unwrap_err().limit.field(),
            "max_answer_bytes"
        );
        assert_eq!(human_bytes(1500), "1500 bytes");
        let mut small = l;
        assert!(small.set("max_event_bytes", 10));
        assert_eq!(small.too_small(), Some(("max_event_bytes", 10)));
        assert!(l.too_small().is_none());
    }
}
