//! PowerPoint presentations (PPTX): one part of the Markdown per slide, in the deck's order.
//!
//! The container is opened through [`Archive`] (the zip guards). The slides' order is the
//! order of `p:sldIdLst` in `ppt/presentation.xml`, whose relationship ids
//! `ppt/_rels/presentation.xml.rels` resolves to slide parts (not the parts' file names,
//! which keep their numbers when slides are moved). Each slide is read as a stream of XML
//! events: every shape (`p:sp`) and table cell gives its paragraphs' text (`a:t`, `a:br` as a
//! line break); the title placeholder (`p:ph type="title"` or `"ctrTitle"`) becomes the slide's
//! `#` heading; the other shapes follow as paragraphs, a shape's paragraphs line by line. The
//! speaker notes (the body placeholder of the slide's notes part) follow under a `Notes:` line.
//!
//! Each slide starts with its marker, `<!-- slide 3 -->`: slide 3 is page 3 for citations. The
//! title and author come from `docProps/core.xml`, as in a Word document.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use quick_xml::events::Event;

use crate::archive::Archive;
use crate::detect::Kind;
use crate::docx::read_core_properties;
use crate::error::{ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::{escape_text_line, no_text_line, Assembler, PageBody, Unit};
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::xml::{attribute, each_event, event_text};
use crate::EXTRACTOR_VERSION;

/// What the messages call this format.
const WHAT: &str = "PowerPoint presentation";

/// Reads PowerPoint presentations (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct PptxExtractor;

impl Extractor for PptxExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let size = crate::file_size(file)?;
        let mut archive = Archive::open(file, WHAT, limits)?;
        let order = archive
            .with_entry("ppt/presentation.xml", |r| {
                slide_ids(r, "ppt/presentation.xml")
            })?
            .ok_or_else(|| {
                ExtractError::new(
                    ErrorKind::Damaged,
                    "the PowerPoint presentation is damaged: it has no ppt/presentation.xml (the \
                     list of its slides)",
                )
            })?;
        let targets = archive
            .with_entry("ppt/_rels/presentation.xml.rels", |r| {
                relationships(r, "ppt/_rels/presentation.xml.rels")
            })?
            .unwrap_or_default();
        let slides: Vec<String> = order
            .iter()
            .filter_map(|id| targets.get(id))
            .map(|(_, target)| resolve("ppt", target))
            .collect();
        if slides.len() as u64 > u64::from(limits.max_pages) {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the presentation has {} slides, over the limit of {} for one source",
                    slides.len(),
                    limits.max_pages
                ),
            ));
        }
        let (title, author) = archive
            .with_entry("docProps/core.xml", |r| {
                read_core_properties(r, WHAT, "docProps/core.xml")
            })?
            .unwrap_or_default();
        let kind = Kind::Pptx;
        out.meta(&SourceMeta {
            mime: kind.mime().to_string(),
            kind,
            size,
            pages: Some(slides.len() as u32),
            title,
            author,
            extractor: format!("pptx; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let mut assembler = Assembler::for_unit(Unit::Slide);
        let mut summary = Summary::default();
        for (index, part) in slides.iter().enumerate() {
            let number = index as u32 + 1;
            out.progress(number, Some(slides.len() as u32))?;
            let slide = archive
                .with_entry(part, |r| read_slide(r, part))?
                .unwrap_or_default();
            let notes_part = archive
                .with_entry(&rels_of(part), |r| relationships(r, part))?
                .unwrap_or_default()
                .into_values()
                .find(|(kind, _)| kind.ends_with("/notesSlide"))
                .map(|(_, target)| resolve(parent(part), &target));
            let notes = match notes_part {
                Some(notes_part) => archive
                    .with_entry(&notes_part, |r| read_slide(r, &notes_part))?
                    .map(|notes| notes.body)
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            let mut content = Vec::new();
            if let Some(title) = &slide.title {
                content.push(format!("# {}", escape_text_line(title)));
            }
            for block in &slide.body {
                push_block(&mut content, block);
            }
            if !notes.is_empty() {
                if !content.is_empty() {
                    content.push(String::new());
                }
                content.push("Notes:".to_string());
                for block in &notes {
                    push_block(&mut content, block);
                }
            }
            let has_text = !content.is_empty();
            let chars: usize = content.iter().map(String::len).sum();
            if chars > limits.max_page_chars {
                return Err(ExtractError::new(
                    ErrorKind::Limit,
                    format!(
                        "slide {number} holds more than {} characters of text, over the limit \
                         for one page",
                        limits.max_page_chars
                    ),
                )
                .at_page(number));
            }
            let before = if has_text {
                Vec::new()
            } else {
                vec![no_text_line(false).to_string()]
            };
            let page = assembler.page(
                Some(number),
                None,
                has_text,
                PageBody {
                    before,
                    content,
                    after: Vec::new(),
                },
            );
            limits.check_text_size(assembler.written())?;
            summary.count_page(&page, assembler.next_line() - 1);
            out.page(page)?;
        }
        Ok(summary)
    }
}

/// Adds a shape's lines as a paragraph (after a blank line).
fn push_block(content: &mut Vec<String>, block: &[String]) {
    let lines: Vec<String> = block
        .iter()
        .map(|line| escape_text_line(line.trim()).into_owned())
        .filter(|line| !line.is_empty())
        .collect();
    if lines.is_empty() {
        return;
    }
    if !content.is_empty() && content.last().is_some_and(|l| l != "Notes:") {
        content.push(String::new());
    }
    content.extend(lines);
}

/// The relationship ids of `p:sldIdLst`, in order.
fn slide_ids(reader: &mut dyn BufRead, part: &str) -> Result<Vec<String>, ExtractError> {
    let mut ids = Vec::new();
    each_event(reader, WHAT, part, |event| {
        if let Event::Start(e) | Event::Empty(e) = event {
            if e.local_name().as_ref() == "sldId" {
                if let Some(id) = attribute(e, "r:id") {
                    ids.push(id);
                }
            }
        }
        Ok(())
    })?;
    Ok(ids)
}

/// A rels part: id → (relationship type, target).
fn relationships(
    reader: &mut dyn BufRead,
    part: &str,
) -> Result<HashMap<String, (String, String)>, ExtractError> {
    let mut found = HashMap::new();
    each_event(reader, WHAT, part, |event| {
        if let Event::Start(e) | Event::Empty(e) = event {
            if e.local_name().as_ref() == "Relationship" {
                if let (Some(id), Some(target)) = (attribute(e, "Id"), attribute(e, "Target")) {
                    let kind = attribute(e, "Type").unwrap_or_default();
                    found.insert(id, (kind, target));
                }
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// The rels part of `part`: `ppt/slides/slide1.xml` → `ppt/slides/_rels/slide1.xml.rels`.
fn rels_of(part: &str) -> String {
    let (folder, name) = part.rsplit_once('/').unwrap_or(("", part));
    format!("{folder}/_rels/{name}.rels")
}

/// The folder of `part`.
fn parent(part: &str) -> &str {
    part.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// `target` (relative, or absolute from the package's root) as a part name from `folder`.
fn resolve(folder: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_string();
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for piece in target.split('/') {
        match piece {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            piece => parts.push(piece),
        }
    }
    parts.join("/")
}

/// A slide's text: its title, and its other shapes' lines.
#[derive(Debug, Default)]
struct Slide {
    title: Option<String>,
    body: Vec<Vec<String>>,
}

/// Reads a slide (or notes) part: shapes, their placeholders and paragraphs.
fn read_slide(reader: &mut dyn BufRead, part: &str) -> Result<Slide, ExtractError> {
    let mut slide = Slide::default();
    // The shape being read: whether it is the title, whether it holds notes-page furniture
    // (slide image, number, date), and its lines.
    let mut shape_depth = 0usize;
    let mut is_title = false;
    let mut skip_shape = false;
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut in_text = false;
    let mut in_cell = 0usize;
    each_event(reader, WHAT, part, |event| {
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    "sp" if !empty => {
                        shape_depth += 1;
                        if shape_depth == 1 {
                            is_title = false;
                            skip_shape = false;
                            lines.clear();
                        }
                    }
                    "tc" if !empty => in_cell += 1,
                    "ph" => {
                        let kind = attribute(e, "type").unwrap_or_default();
                        is_title = matches!(kind.as_str(), "title" | "ctrTitle");
                        skip_shape =
                            matches!(kind.as_str(), "sldNum" | "sldImg" | "dt" | "ftr" | "hdr");
                    }
                    "t" if !empty => in_text = true,
                    "br" => line.push('\n'),
                    _ => {}
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "t" => in_text = false,
                "p" => {
                    if shape_depth > 0 || in_cell > 0 {
                        lines.extend(line.split('\n').map(str::to_string));
                    }
                    line.clear();
                }
                "tc" => in_cell = in_cell.saturating_sub(1),
                "tbl" if shape_depth == 0 => {
                    slide.body.push(std::mem::take(&mut lines));
                }
                "sp" => {
                    shape_depth = shape_depth.saturating_sub(1);
                    if shape_depth == 0 {
                        let text = std::mem::take(&mut lines);
                        if skip_shape {
                        } else if is_title && slide.title.is_none() {
                            let title = text
                                .iter()
                                .map(|l| l.trim())
                                .filter(|l| !l.is_empty())
                                .collect::<Vec<_>>()
                                .join(" ");
                            if !title.is_empty() {
                                slide.title = Some(title);
                            }
                        } else {
                            slide.body.push(text);
                        }
                    }
                }
                _ => {}
            },
            other if in_text => {
                if let Some(text) = event_text(other) {
                    line.push_str(&text);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(slide)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relationship_targets_resolve_from_their_part_s_folder() {
        assert_eq!(resolve("ppt", "slides/slide2.xml"), "ppt/slides/slide2.xml");
        assert_eq!(
            resolve("ppt/slides", "../notesSlides/notesSlide1.xml"),
            "ppt/notesSlides/notesSlide1.xml"
        );
        assert_eq!(
            resolve("ppt", "/ppt/slides/slide1.xml"),
            "ppt/slides/slide1.xml"
        );
        assert_eq!(
            rels_of("ppt/slides/slide1.xml"),
            "ppt/slides/_rels/slide1.xml.rels"
        );
    }
}
