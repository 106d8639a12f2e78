//! A server-sent events decoder fed with arbitrary byte chunks.
//!
//! Lines end with `\n`, `\r\n` or `\r`; `event:` and `data:` fields accumulate until a blank
//! line dispatches the event; `:` comment lines and other fields are ignored. A line split across
//! chunks (even inside a UTF-8 sequence) is held until its end arrives — up to the line limit
//! of its [`StreamLimits`]; an event's data is held up to the event limit.

use crate::limits::{LimitExceeded, StreamLimits};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseEvent {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental decoder.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    skip_lf: bool,
    event: Option<String>,
    data: Option<String>,
    limits: StreamLimits,
}

impl SseDecoder {
    /// A decoder holding at most what `limits` allow.
    pub fn new(limits: StreamLimits) -> Self {
        SseDecoder {
            limits,
            ..SseDecoder::default()
        }
    }

    /// Feed `bytes`; returns the events completed by them, or the limit a line or an event
    /// went past.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, LimitExceeded> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.skip_lf = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.line(&String::from_utf8_lossy(&line), &mut out)?;
                }
                _ => {
                    self.line.push(b);
                    self.limits.line(self.line.len())?;
                }
            }
        }
        Ok(out)
    }

    /// End of stream: an event not followed by a blank line is still dispatched.
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, LimitExceeded> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line(&String::from_utf8_lossy(&line), &mut out)?;
        }
        self.line("", &mut out)?;
        Ok(out)
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), LimitExceeded> {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                });
            }
            self.event = None;
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    self.limits.event(data.len() + 1 + value.len())?;
                    data.push('\n');
                    data.push_str(value);
                }
                None => {
                    self.limits.event(value.len())?;
                    self.data = Some(value.to_string());
                }
            },
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::default();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.feed(c).unwrap()).collect();
        out.extend(d.finish().unwrap());
        out
    }

    #[test]
    fn a_line_or_an_event_past_its_limit_fails() {
        use crate::limits::Limit;
        let limits = StreamLimits {
            max_line_bytes: 1024,
            max_event_bytes: 2048,
            max_answer_bytes: 4096,
        };
        let mut d = SseDecoder::new(limits);
        let line = vec![b'x'; 1024];
        assert_eq!(d.feed(&line), Ok(vec![]), "exactly the limit is fine");
        assert_eq!(d.feed(b"x").unwrap_err().limit, Limit::Line);

        let mut d = SseDecoder::new(limits);
        let data = format!("data: {}\n", "y".repeat(1000));
        assert_eq!(d.feed(data.repeat(2).as_bytes()), Ok(vec![]));
        assert_eq!(d.feed(data.as_bytes()).unwrap_err().limit, Limit::Event);
    }

    #[test]
    fn events_across_chunk_boundaries_and_line_endings() {
        let text = "event: a\r\ndata: {\"x\":\"é\"}\r\n\r\n: comment\ndata: one\ndata: two\n\nretry: 5\r\rdata: [DONE]";
        let expected = vec![
            SseEvent {
                event: Some("a".into()),
                data: "{\"x\":\"é\"}".into(),
            },
            SseEvent {
                event: None,
                data: "one\ntwo".into(),
            },
            SseEvent {
                event: None,
                data: "[DONE]".into(),
            },
        ];
        assert_eq!(all(&[text.as_bytes()]), expected);
        // Byte by byte, splitting the é and every CRLF.
        let bytes: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
        assert_eq!(all(&bytes), expected);
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        assert!(all(&[b"event: ping\n\n"]).is_empty());
    }
}
