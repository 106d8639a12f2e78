//! Web pages (HTML): the page's main content as Markdown, its navigation and boilerplate left
//! out.
//!
//! The file's bytes are decoded ([`charset::decode`]: byte-order mark, `<meta charset>`, then a
//! guess). `dom_smoothie` (a port of Firefox's Readability) then decides whether the page is an
//! article: when it is, its main content is kept (the menus, sidebars, footers and share
//! buttons around it are not), with the article's title and byline as the source's title and
//! author. A page that is not an article (an index, a reference page) keeps its whole `<body>`
//! without `nav`, `header`, `footer`, `aside`, `script`, `style`, `form` and `noscript`. Either
//! way `htmd` turns the HTML into Markdown (headings, lists, tables, code, links), which is then
//! sent in parts as a Markdown file is ([`text`](crate::text)). A web page has no pages: no
//! page markers.

use std::io::{BufReader, Cursor};
use std::path::Path;

use crate::charset;
use crate::detect::Kind;
use crate::error::{ErrorKind, ExtractError};
use crate::limits::Limits;
use crate::markdown::parse_page_marker;
use crate::output::{Extractor, PageSink, SourceMeta, Summary};
use crate::text::write_parts;
use crate::EXTRACTOR_VERSION;

/// Elements that are never a page's content.
const BOILERPLATE: [&str; 11] = [
    "head", "nav", "header", "footer", "aside", "script", "style", "form", "noscript", "template",
    "iframe",
];

/// Reads web pages (see the module docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlExtractor;

impl Extractor for HtmlExtractor {
    fn extract(
        &self,
        file: &Path,
        limits: &Limits,
        out: &mut dyn PageSink,
    ) -> Result<Summary, ExtractError> {
        let bytes = std::fs::read(file).map_err(|e| ExtractError::io("read the file", &e))?;
        limits.check_text_size(bytes.len() as u64)?;
        let (html, _encoding) = charset::decode(&bytes, true);
        drop(bytes);
        let page = main_content(&html)?;
        let kind = Kind::Html;
        out.meta(&SourceMeta {
            mime: kind.mime().to_string(),
            kind: kind.clone(),
            size: crate::file_size(file)?,
            pages: None,
            title: page.title,
            author: page.author,
            extractor: format!("html; artifactflow-extract {EXTRACTOR_VERSION}"),
        })?;
        let markdown = safe_markdown(&page.markdown);
        write_parts(
            Box::new(BufReader::new(Cursor::new(markdown.into_bytes()))),
            &Kind::Markdown,
            limits,
            out,
        )
    }
}

/// What is kept of a page.
#[derive(Debug)]
pub struct MainContent {
    /// The content as Markdown.
    pub markdown: String,
    /// The article's title, or the page's `<title>`.
    pub title: Option<String>,
    /// The article's byline.
    pub author: Option<String>,
}

/// `html` as Markdown, its boilerplate elements (navigation, scripts…) left out.
pub fn to_markdown(html: &str) -> Result<String, ExtractError> {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(BOILERPLATE.to_vec())
        .build()
        .convert(html)
        .map_err(|e| {
            ExtractError::new(
                ErrorKind::Damaged,
                format!("the web page cannot be turned into text ({e})"),
            )
        })
}

/// The page's main content (see the module docs).
pub fn main_content(html: &str) -> Result<MainContent, ExtractError> {
    let convert = to_markdown;
    let clean = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let readability = dom_smoothie::Readability::new(html, None, None);
    if let Ok(mut readability) = readability {
        let page_title = clean(&readability.get_article_title());
        if readability.is_probably_readable() {
            if let Ok(article) = readability.parse() {
                let markdown = convert(&article.content)?;
                if !markdown.trim().is_empty() {
                    return Ok(MainContent {
                        markdown,
                        title: clean(&article.title).or(page_title),
                        author: article.byline.as_deref().and_then(clean),
                    });
                }
            }
        }
        return Ok(MainContent {
            markdown: convert(html)?,
            title: page_title,
            author: None,
        });
    }
    Ok(MainContent {
        markdown: convert(html)?,
        title: None,
        author: None,
    })
}

/// `markdown` with a line break at its end, and no line that would read as a page marker.
fn safe_markdown(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 1);
    for line in markdown.lines() {
        if parse_page_marker(line).is_some() {
            out.push('\\');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
