//! The tolerant `<tool_call>` parser (being written; see issue 3).
