//! Where an answer ends, besides the model's end-of-generation tokens and the token limit.
//!
//! - [`StopTexts`]: the end markers of the chat format in use (see `formats`), written as plain
//!   text. A model prompted in a format it was not trained on (Gemma 3 given ChatML) writes
//!   `<|im_end|>` as seven ordinary tokens and goes on to write the next turns itself; the
//!   answer ends where the marker starts, and the marker is not part of it. The text that could
//!   still become a marker (`<|im_`) is held back until it cannot.
//! - [`Repeats`]: an answer stuck in a loop. A small model without its template writes the
//!   same line again and again until the context is full, which on a 32,768-token context is
//!   minutes. When the end of the answer is one span of tokens written again and again (exactly)
//!   over at least [`REPEAT_TOKENS`] tokens and at least [`REPEAT_TIMES`] times, the answer is
//!   stopped there. Spans of up to [`MAX_SPAN`] tokens are looked for: a paragraph repeated
//!   four times in a row is caught after four copies; a list of the same short value (`0, 0,
//!   0…`) may run to 256 tokens.

use std::collections::VecDeque;

/// The fewest tokens a repeated stretch covers before the answer is stopped.
pub const REPEAT_TOKENS: usize = 256;
/// The fewest copies of the span in it.
pub const REPEAT_TIMES: usize = 4;
/// The longest span looked for, in tokens.
pub const MAX_SPAN: usize = 512;

/// Holds back streamed text that may be the start of an end marker, and finds the markers.
#[derive(Debug, Default)]
pub struct StopTexts {
    stops: Vec<String>,
    held: String,
}

impl StopTexts {
    /// A matcher for these texts (empty ones are ignored).
    pub fn new<S: AsRef<str>>(stops: &[S]) -> StopTexts {
        StopTexts {
            stops: stops
                .iter()
                .map(|s| s.as_ref().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            held: String::new(),
        }
    }

    /// Add `piece` of the answer; returns the text that can be passed on now and whether an end
    /// marker was reached (the text is then what came before it, and the rest is dropped).
    pub fn push(&mut self, piece: &str) -> (String, bool) {
        self.held.push_str(piece);
        let first = self
            .stops
            .iter()
            .filter_map(|stop| self.held.find(stop.as_str()))
            .min();
        if let Some(at) = first {
            self.held.truncate(at);
            return (std::mem::take(&mut self.held), true);
        }
        // Keep back the longest end that a marker starts with.
        let keep = self
            .stops
            .iter()
            .flat_map(|stop| {
                (1..stop.len())
                    .filter(|&n| stop.is_char_boundary(n) && self.held.ends_with(&stop[..n]))
            })
            .max()
            .unwrap_or(0);
        let rest = self.held.split_off(self.held.len() - keep);
        (std::mem::replace(&mut self.held, rest), false)
    }

    /// The text held back, when the answer ends for another reason.
    pub fn finish(self) -> String {
        self.held
    }
}

/// A loop found at the end of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repeat {
    /// The span's length in tokens.
    pub span: usize,
    /// How many times it was written in a row (whole copies).
    pub times: usize,
}

/// Watches the tokens of an answer for one span written again and again at its end.
///
/// For each span length `p` it keeps how many tokens in a row, up to the last, equal the token
/// `p` before them: the end of the answer then repeats a `p`-token span over that many tokens
/// plus `p`. One comparison per span length and token.
#[derive(Debug)]
pub struct Repeats<T> {
    /// The last [`MAX_SPAN`] tokens.
    recent: VecDeque<T>,
    /// For span length `p` (at `p - 1`): the tokens in a row equal to the one `p` before.
    runs: Vec<usize>,
}

impl<T: PartialEq + Copy> Default for Repeats<T> {
    fn default() -> Self {
        Repeats {
            recent: VecDeque::with_capacity(MAX_SPAN),
            runs: vec![0; MAX_SPAN],
        }
    }
}

impl<T: PartialEq + Copy> Repeats<T> {
    /// Add the next token; returns the loop the answer now ends in, if it is long enough to
    /// stop (the shortest span when several fit).
    pub fn push(&mut self, token: T) -> Option<Repeat> {
        let n = self.recent.len();
        for span in 1..=n {
            let run = &mut self.runs[span - 1];
            *run = if self.recent[n - span] == token {
                *run + 1
            } else {
                0
            };
        }
        if n == MAX_SPAN {
            self.recent.pop_front();
        }
        self.recent.push_back(token);
        (1..=n).find_map(|span| {
            let covered = self.runs[span - 1] + span;
            (covered >= REPEAT_TOKENS.max(REPEAT_TIMES * span)).then_some(Repeat {
                span,
                times: covered / span,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(stops: &[&str], pieces: &[&str]) -> (String, bool) {
        let mut matcher = StopTexts::new(stops);
        let mut shown = String::new();
        for piece in pieces {
            let (text, ended) = matcher.push(piece);
            shown.push_str(&text);
            if ended {
                return (shown, true);
            }
        }
        shown.push_str(&matcher.finish());
        (shown, false)
    }

    #[test]
    fn a_marker_written_in_pieces_ends_the_answer_before_it() {
        let chatml = ["<|im_end|>", "<|im_start|>"];
        // As Gemma 3 wrote it under ChatML: the marker in ordinary tokens, then a turn of its own.
        let (text, ended) = stream(
            &chatml,
            &[
                "Write a poem",
                " about the ocean.",
                "<",
                "|",
                "im",
                "_",
                "end",
                "|>",
                "\n<|im_start|>user",
            ],
        );
        assert_eq!(
            (text.as_str(), ended),
            ("Write a poem about the ocean.", true)
        );
        // The start of the next turn ends it too.
        let (text, ended) = stream(&chatml, &["Paris.\n<|im_st", "art|>user\nAnd"]);
        assert_eq!((text.as_str(), ended), ("Paris.\n", true));
        // What only looked like the start of one passes on once it is clear, in order.
        let mut matcher = StopTexts::new(&chatml);
        assert_eq!(matcher.push("a <|"), ("a ".to_string(), false));
        assert_eq!(matcher.push("im"), (String::new(), false));
        assert_eq!(matcher.push("portant"), ("<|important".to_string(), false));
        assert_eq!(matcher.push(" <"), (" ".to_string(), false));
        assert_eq!(matcher.finish(), "<");
        // No markers: everything passes at once; characters beyond ASCII are kept whole.
        assert_eq!(
            stream(&[], &["<|im_end|>"]),
            ("<|im_end|>".to_string(), false)
        );
        let (text, ended) = stream(&["<end_of_turn>"], &["€ ", "<end_of_", "turn>x"]);
        assert_eq!((text.as_str(), ended), ("€ ", true));
    }

    #[test]
    fn a_span_written_again_and_again_is_stopped_once_long_enough() {
        // Gemma 3 without its template: the same line of 9 tokens, again and again.
        let line = [10, 11, 12, 13, 14, 15, 16, 17, 18];
        let mut repeats = Repeats::default();
        let mut stopped = None;
        for (i, token) in line.iter().cycle().take(2000).enumerate() {
            if let Some(found) = repeats.push(*token) {
                stopped = Some((i + 1, found));
                break;
            }
        }
        let (at, found) = stopped.expect("the loop is stopped");
        assert_eq!(found.span, 9);
        assert_eq!(at, REPEAT_TOKENS);
        assert_eq!(found.times, REPEAT_TOKENS / 9);

        // One token again and again: after REPEAT_TOKENS of them.
        let mut repeats = Repeats::default();
        let at = (1..=1000).find(|_| repeats.push(7).is_some());
        assert_eq!(at, Some(REPEAT_TOKENS));

        // A long span (a paragraph): after REPEAT_TIMES copies.
        let paragraph: Vec<u32> = (0..100).collect();
        let mut repeats = Repeats::default();
        let found = paragraph
            .iter()
            .cycle()
            .take(1000)
            .enumerate()
            .find_map(|(i, t)| repeats.push(*t).map(|r| (i + 1, r)));
        assert_eq!(
            found,
            Some((
                400,
                Repeat {
                    span: 100,
                    times: 4
                }
            ))
        );
    }

    #[test]
    fn text_that_varies_is_never_stopped() {
        // A numbered list (a number, then the same separator), a list whose items share their
        // start, and a loop broken before it is long enough: none is stopped.
        let mut repeats = Repeats::default();
        assert!((0..3000u32).all(|n| repeats.push(n + 10).is_none() && repeats.push(0).is_none()));
        let mut repeats = Repeats::default();
        for round in 0..50u32 {
            for t in 0..4u32 {
                assert_eq!(repeats.push(t), None, "round {round}");
            }
            assert_eq!(repeats.push(100 + round), None);
        }
        let mut repeats = Repeats::default();
        let mut tokens: Vec<u32> = [1, 2, 3].repeat(80);
        tokens.push(9);
        tokens.extend([1, 2, 3].repeat(80));
        assert!(tokens.into_iter().all(|t| repeats.push(t).is_none()));
    }
}
