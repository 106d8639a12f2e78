//! Reading the XML parts of Office documents and books as a stream of events (quick-xml),
//! never as a tree: the helpers the DOCX and PPTX readers share.

use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use quick_xml::XmlVersion;

use crate::error::{ErrorKind, ExtractError};

/// An XML reader over an entry, with a message for its errors.
fn xml_error(what: &str, part: &str, e: impl std::fmt::Display) -> ExtractError {
    ExtractError::new(
        ErrorKind::Damaged,
        format!("the {what} is damaged: its part {part} is not valid XML ({e})"),
    )
}

/// The value of attribute `name` (`w:val`) of `element`, if it has one.
pub fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.normalized_value(XmlVersion::Implicit1_0).ok())
        .map(|v| v.into_owned())
}

/// Text of a `&name;` or `&#N;` reference.
fn resolve_reference(name: &str) -> Option<String> {
    quick_xml::escape::unescape(&format!("&{name};"))
        .ok()
        .map(|s| s.into_owned())
}

/// Reads every event of `reader` (the part `part` of a `what`, for messages), calling `on`
/// with each.
pub fn each_event(
    reader: &mut dyn BufRead,
    what: &str,
    part: &str,
    mut on: impl FnMut(&Event<'_>) -> Result<(), ExtractError>,
) -> Result<(), ExtractError> {
    let mut xml = quick_xml::Reader::from_reader(reader);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let event = xml
            .read_event_into(&mut buf)
            .map_err(|e| xml_error(what, part, e))?;
        if matches!(event, Event::Eof) {
            return Ok(());
        }
        on(&event)?;
    }
}

/// The text of an event that carries text (`Text`, `CData`, a reference).
pub fn event_text(event: &Event<'_>) -> Option<String> {
    match event {
        Event::Text(text) => Some(text.xml10_content().into_owned()),
        Event::CData(data) => Some(data.xml10_content().into_owned()),
        Event::GeneralRef(reference) => match reference.resolve_char_ref() {
            Ok(Some(c)) => Some(c.to_string()),
            _ => resolve_reference(&reference.xml10_content()),
        },
        _ => None,
    }
}
