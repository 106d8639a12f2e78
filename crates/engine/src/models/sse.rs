//! A server-sent events decoder fed with arbitrary byte chunks.
//!
//! Lines end with `\n`, `\r\n` or `\r`; `event:` and `data:` fields accumulate until a blank
//! line dispatches the event; `:` comment lines and other fields are ignored. A line split across
//! chunks (even inside a UTF-8 sequence) is held until its end arrives.

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
}

impl SseDecoder {
    /// Feed `bytes`; returns the events completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
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
                    self.line(&String::from_utf8_lossy(&line), &mut out);
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// End of stream: an event not followed by a blank line is still dispatched.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line(&String::from_utf8_lossy(&line), &mut out);
        }
        self.line("", &mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                out.push(SseEvent {
                    event: self.event.take(),
                    data,
                });
            }
            self.event = None;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::default();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.feed(c)).collect();
        out.extend(d.finish());
        out
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
