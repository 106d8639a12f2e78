//! EPUB books: one part of the Markdown per item of the reading order (the spine).
//!
//! The container is opened through [`Archive`] (the zip guards). `META-INF/container.xml`
//! names the package document (the OPF); the OPF gives the title (`dc:title`), the author
//! (`dc:creator`), the manifest (id → file) and the spine, the reading order. Each spine item's
//! XHTML goes through the web page path's converter ([`html::to_markdown`]: `htmd`, navigation
//! and scripts left out) and becomes one part under its marker, `<!-- chapter 3 -->`: chapter 3
//! is page 3 for citations. An item without text (a cover image) is kept as a part without
//! text so the numbers stay the spine's.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use quick_xml::events::Event;

use crate::archive::Archive;
use crate::charset;
use crate::detect::Kind;
use crate::error::{ErrorKind, ExtractError};
use crate::html;
use crate::limits::Limits;
use crate::markdown::{no_text_line, parse_page_marker, Assembler, PageBody, Unit};
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::xml::{attribute, each_event, event_text};
use crate::EXTRACTOR_VERSION;

/// What the messages call this format.
const WHAT: &str = "EPUB book";

/// Reads EPUB books (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct EpubExtractor;

/// What the package document says.
#[derive(Debug, Default)]
struct Package {
    title: Option<String>,
    author: Option<String>,
    manifest: HashMap<String, String>,
    spine: Vec<String>,
}

impl Extractor for EpubExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let size = crate::file_size(file)?;
        let mut archive = Archive::open(file, WHAT, limits)?;
        let damaged = |why: &str| {
            ExtractError::new(
                ErrorKind::Damaged,
                format!("the EPUB book is damaged: {why}"),
            )
        };
        let opf_path = archive
            .with_entry("META-INF/container.xml", |r| {
                rootfile(r, "META-INF/container.xml")
            })?
            .flatten()
            .ok_or_else(|| damaged("META-INF/container.xml does not name its package document"))?;
        let package = archive
            .with_entry(&opf_path, |r| read_package(r, &opf_path))?
            .ok_or_else(|| damaged(&format!("its package document {opf_path} is missing")))?;
        let folder = opf_path.rsplit_once('/').map_or("", |(folder, _)| folder);
        let items: Vec<String> = package
            .spine
            .iter()
            .filter_map(|id| package.manifest.get(id))
            .map(|href| join(folder, href))
            .collect();
        if items.len() as u64 > u64::from(limits.max_pages) {
            return Err(ExtractError::new(
                ErrorKind::Limit,
                format!(
                    "the book has {} chapters, over the limit of {} for one source",
                    items.len(),
                    limits.max_pages
                ),
            ));
        }
        out.meta(&SourceMeta {
            mime: Kind::Epub.mime().to_string(),
            kind: Kind::Epub,
            size,
            pages: Some(items.len() as u32),
            title: package.title,
            author: package.author,
            extractor: format!("epub; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let mut assembler = Assembler::for_unit(Unit::Chapter);
        let mut summary = Summary::default();
        for (index, item) in items.iter().enumerate() {
            let number = index as u32 + 1;
            out.progress(number, Some(items.len() as u32))?;
            let xhtml = archive
                .with_entry(item, |r| {
                    let mut bytes = Vec::new();
                    r.read_to_end(&mut bytes).map_err(|e| {
                        ExtractError::new(
                            ErrorKind::Damaged,
                            format!("the EPUB book's part {item} cannot be read ({e})"),
                        )
                    })?;
                    Ok(charset::decode(&bytes, true).0)
                })?
                .unwrap_or_default();
            let markdown = html::to_markdown(&xhtml)?;
            let content: Vec<String> = markdown
                .lines()
                .map(|line| {
                    if parse_page_marker(line).is_some() {
                        format!("\\{line}")
                    } else {
                        line.to_string()
                    }
                })
                .collect();
            let has_text = content.iter().any(|l| !l.trim().is_empty());
            let chars: usize = content.iter().map(String::len).sum();
            if chars > limits.max_page_chars {
                return Err(ExtractError::new(
                    ErrorKind::Limit,
                    format!(
                        "chapter {number} holds more than {} characters of text, over the limit \
                         for one page",
                        limits.max_page_chars
                    ),
                )
                .at_page(number));
            }
            let (before, content) = if has_text {
                (Vec::new(), content)
            } else {
                (vec![no_text_line(false).to_string()], Vec::new())
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

/// `href` (relative to `folder`, percent-encoded spaces decoded) as a part name.
fn join(folder: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href).replace("%20", " ");
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for piece in href.split('/') {
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

/// The `full-path` of the first `rootfile` of `META-INF/container.xml`.
fn rootfile(reader: &mut dyn BufRead, part: &str) -> Result<Option<String>, ExtractError> {
    let mut found = None;
    each_event(reader, WHAT, part, |event| {
        if let Event::Start(e) | Event::Empty(e) = event {
            if e.local_name().as_ref() == "rootfile" && found.is_none() {
                found = attribute(e, "full-path");
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// The package document: title, author, manifest and spine.
fn read_package(reader: &mut dyn BufRead, part: &str) -> Result<Package, ExtractError> {
    let mut package = Package::default();
    let mut inside: Option<bool> = None; // Some(true) in dc:title, Some(false) in dc:creator
    let mut text = String::new();
    each_event(reader, WHAT, part, |event| {
        match event {
            Event::Start(e) | Event::Empty(e) => {
                let empty = matches!(event, Event::Empty(_));
                match e.local_name().as_ref() {
                    "title" if !empty && package.title.is_none() => {
                        inside = Some(true);
                        text.clear();
                    }
                    "creator" if !empty && package.author.is_none() => {
                        inside = Some(false);
                        text.clear();
                    }
                    "item" => {
                        if let (Some(id), Some(href)) = (attribute(e, "id"), attribute(e, "href")) {
                            package.manifest.insert(id, href);
                        }
                    }
                    "itemref" => {
                        if let Some(id) = attribute(e, "idref") {
                            package.spine.push(id);
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                if let Some(is_title) = inside.take() {
                    let value = Some(text.trim().to_string()).filter(|t| !t.is_empty());
                    if is_title {
                        package.title = value;
                    } else {
                        package.author = value;
                    }
                }
            }
            other if inside.is_some() => {
                if let Some(more) = event_text(other) {
                    text.push_str(&more);
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(package)
}
