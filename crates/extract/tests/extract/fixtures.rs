//! PDFs made by code for the tests (nothing binary is committed), written with lopdf.
//!
//! [`Doc`] builds an ordinary document: pages of text lines in Helvetica, a running header and
//! "Page N of M" footers, page labels, an "ﬁ" ligature glyph (a character code that the font's
//! ToUnicode CMap maps to U+FB01, as TeX's output has it) and pages that hold only an image (a
//! scan). The hostile ones ([`cyclic_page_tree`], [`deep_page_tree`], [`encrypted`],
//! [`truncate`]) are broken on purpose.

use std::path::{Path, PathBuf};

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, ObjectId, Stream, StringFormat};

/// The character code that the ligature font maps to "ﬁ".
const FI_CODE: u8 = 0x66;

/// One line of a page: plain text, or text with the "ﬁ" ligature glyph between two parts.
#[derive(Clone)]
enum Line {
    Text(String),
    Ligature { before: String, after: String },
}

#[derive(Clone, Default)]
struct PageSpec {
    lines: Vec<Line>,
    image_only: bool,
}

/// A PDF to be written: pages, and what repeats on them.
#[derive(Default)]
pub struct Doc {
    pages: Vec<PageSpec>,
    header: Option<String>,
    footer_page_numbers: bool,
    /// `(first page index, style)` ranges of the /PageLabels number tree; style `r` or `D`.
    labels: Vec<(i64, &'static str)>,
    title: Option<String>,
    author: Option<String>,
}

impl Doc {
    /// An empty document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a page with these lines of text, top to bottom.
    pub fn page(mut self, lines: &[&str]) -> Self {
        self.pages.push(PageSpec {
            lines: lines.iter().map(|l| Line::Text(l.to_string())).collect(),
            image_only: false,
        });
        self
    }

    /// Adds `count` pages, each with `lines_per_page` lines of words that differ from line to
    /// line and page to page (so none of them is taken for a running header).
    pub fn pages_of_words(mut self, count: usize, lines_per_page: usize) -> Self {
        const WORDS: [&str; 11] = [
            "apples", "pears", "plums", "figs", "dates", "limes", "grapes", "melons", "kiwis",
            "cherries", "quinces",
        ];
        for p in 0..count {
            let lines = (0..lines_per_page)
                .map(|l| {
                    let n = p * lines_per_page + l;
                    Line::Text(format!(
                        "Page {} line {} says {} go well with {} and {}.",
                        p + 1,
                        l + 1,
                        WORDS[n % 11],
                        WORDS[(n / 11) % 11],
                        WORDS[(n / 121) % 11]
                    ))
                })
                .collect();
            self.pages.push(PageSpec {
                lines,
                image_only: false,
            });
        }
        self
    }

    /// Adds a line with the "ﬁ" ligature glyph between `before` and `after` to the last page.
    pub fn ligature_line(mut self, before: &str, after: &str) -> Self {
        let page = self
            .pages
            .last_mut()
            .expect("a page before its ligature line");
        page.lines.push(Line::Ligature {
            before: before.to_string(),
            after: after.to_string(),
        });
        self
    }

    /// Adds a page that holds only an image (what a scanner makes).
    pub fn image_only_page(mut self) -> Self {
        self.pages.push(PageSpec {
            lines: Vec::new(),
            image_only: true,
        });
        self
    }

    /// Puts this line at the top of every page that has text.
    pub fn header(mut self, text: &str) -> Self {
        self.header = Some(text.to_string());
        self
    }

    /// Puts "Page N of M" at the bottom of every page that has text.
    pub fn footer_page_numbers(mut self) -> Self {
        self.footer_page_numbers = true;
        self
    }

    /// Labels the first `roman` pages i, ii, iii… and the rest 1, 2, 3….
    pub fn roman_front_matter(mut self, roman: i64) -> Self {
        self.labels = vec![(0, "r"), (roman, "D")];
        self
    }

    /// Sets the document information's title and author.
    pub fn info(mut self, title: &str, author: &str) -> Self {
        self.title = Some(title.to_string());
        self.author = Some(author.to_string());
        self
    }

    /// The document as a lopdf document (to be broken further, or saved).
    pub fn document(&self) -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "Encoding" => "WinAnsiEncoding",
        });
        let cmap = format!(
            "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
             /CMapName /Ligatures def /CMapType 2 def\n\
             1 begincodespacerange <00> <FF> endcodespacerange\n\
             1 beginbfchar <{FI_CODE:02X}> <FB01> endbfchar\n\
             endcmap CMapName currentdict /CMap defineresource pop end end\n"
        );
        let to_unicode = doc.add_object(Stream::new(dictionary! {}, cmap.into_bytes()));
        let ligature_font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "Encoding" => "WinAnsiEncoding", "ToUnicode" => to_unicode,
        });
        let image_id = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => 2, "Height" => 2,
                "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
            },
            vec![0, 255, 255, 0],
        ));
        let resources_id = doc.add_object(dictionary! {
            "Font" => dictionary! { "F1" => font_id, "F2" => ligature_font_id },
            "XObject" => dictionary! { "Im1" => image_id },
        });
        let total = self.pages.len();
        let mut kids = Vec::new();
        for (index, spec) in self.pages.iter().enumerate() {
            let content = page_content(spec, index + 1, total, self);
            let content_id = doc.add_object(Stream::new(dictionary! {}, content));
            let page_id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            });
            kids.push(Object::Reference(page_id));
        }
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => kids, "Count" => total as i64,
                "Resources" => resources_id, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            }),
        );
        let mut catalog = dictionary! { "Type" => "Catalog", "Pages" => pages_id };
        if !self.labels.is_empty() {
            let mut nums = Vec::new();
            for (start, style) in &self.labels {
                nums.push(Object::Integer(*start));
                nums.push(Object::Dictionary(dictionary! { "S" => *style }));
            }
            catalog.set("PageLabels", dictionary! { "Nums" => nums });
        }
        let catalog_id = doc.add_object(catalog);
        doc.trailer.set("Root", catalog_id);
        if self.title.is_some() || self.author.is_some() {
            let mut info = dictionary! {};
            if let Some(title) = &self.title {
                info.set("Title", Object::string_literal(title.as_str()));
            }
            if let Some(author) = &self.author {
                info.set("Author", Object::string_literal(author.as_str()));
            }
            let info_id = doc.add_object(info);
            doc.trailer.set("Info", info_id);
        }
        doc
    }

    /// The document's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        save(&mut self.document())
    }

    /// Writes the document to `dir/name` and returns the path.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        write(dir, name, &self.bytes())
    }
}

/// The content stream of one page: header, lines, footer, or the image of a scan.
fn page_content(spec: &PageSpec, number: usize, total: usize, doc: &Doc) -> Vec<u8> {
    let mut ops = Vec::new();
    if spec.image_only {
        ops.push(Operation::new("q", vec![]));
        ops.push(Operation::new(
            "cm",
            vec![
                500.into(),
                0.into(),
                0.into(),
                700.into(),
                50.into(),
                50.into(),
            ],
        ));
        ops.push(Operation::new("Do", vec!["Im1".into()]));
        ops.push(Operation::new("Q", vec![]));
        return Content { operations: ops }
            .encode()
            .expect("page content encodes");
    }
    let text_at = |ops: &mut Vec<Operation>, y: i64, parts: &[(&str, Vec<u8>)]| {
        ops.push(Operation::new("BT", vec![]));
        ops.push(Operation::new("Td", vec![72.into(), y.into()]));
        for (font, bytes) in parts {
            ops.push(Operation::new("Tf", vec![(*font).into(), 11.into()]));
            ops.push(Operation::new(
                "Tj",
                vec![Object::String(bytes.clone(), StringFormat::Literal)],
            ));
        }
        ops.push(Operation::new("ET", vec![]));
    };
    if let Some(header) = &doc.header {
        text_at(&mut ops, 760, &[("F1", header.as_bytes().to_vec())]);
    }
    for (i, line) in spec.lines.iter().enumerate() {
        let y = 720 - 14 * i as i64;
        match line {
            Line::Text(text) => text_at(&mut ops, y, &[("F1", text.as_bytes().to_vec())]),
            Line::Ligature { before, after } => text_at(
                &mut ops,
                y,
                &[
                    ("F1", before.as_bytes().to_vec()),
                    ("F2", vec![FI_CODE]),
                    ("F1", after.as_bytes().to_vec()),
                ],
            ),
        }
    }
    if doc.footer_page_numbers {
        let footer = format!("Page {number} of {total}");
        text_at(&mut ops, 40, &[("F1", footer.into_bytes())]);
    }
    Content { operations: ops }
        .encode()
        .expect("page content encodes")
}

fn save(doc: &mut Document) -> Vec<u8> {
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).expect("the PDF saves");
    bytes
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("the fixture is written");
    path
}

/// A PDF whose page tree's only Pages node lists itself among its kids.
pub fn cyclic_page_tree() -> Vec<u8> {
    let mut doc = Doc::new().page(&["Before the loop."]).document();
    let root_pages = pages_root(&doc);
    let inner = doc.new_object_id();
    doc.objects.insert(
        inner,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Parent" => root_pages, "Count" => 2,
            "Kids" => vec![Object::Reference(root_pages), Object::Reference(inner)],
        }),
    );
    if let Some(Object::Dictionary(pages)) = doc.objects.get_mut(&root_pages) {
        let mut kids = pages
            .get(b"Kids")
            .and_then(Object::as_array)
            .cloned()
            .unwrap_or_default();
        kids.push(Object::Reference(inner));
        pages.set("Kids", kids);
        pages.set("Count", 3);
    }
    save(&mut doc)
}

/// A PDF whose one page sits under `depth` nested Pages nodes.
pub fn deep_page_tree(depth: usize) -> Vec<u8> {
    let mut doc = Doc::new()
        .page(&["At the bottom of a deep tree."])
        .document();
    let root_pages = pages_root(&doc);
    let kids = match doc.objects.get(&root_pages) {
        Some(Object::Dictionary(pages)) => pages
            .get(b"Kids")
            .and_then(Object::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let mut child_kids = kids;
    for _ in 0..depth {
        let node = doc.add_object(dictionary! {
            "Type" => "Pages", "Count" => 1, "Kids" => child_kids,
        });
        child_kids = vec![Object::Reference(node)];
    }
    if let Some(Object::Dictionary(pages)) = doc.objects.get_mut(&root_pages) {
        pages.set("Kids", child_kids);
    }
    save(&mut doc)
}

/// A PDF encrypted with the standard security handler (RC4, 128 bits) under a user password,
/// so opening it without one fails.
pub fn encrypted() -> Vec<u8> {
    let mut doc = Doc::new().page(&["A secret page."]).document();
    doc.trailer.set(
        "ID",
        vec![
            Object::String(b"0123456789abcdef".to_vec(), StringFormat::Hexadecimal),
            Object::String(b"0123456789abcdef".to_vec(), StringFormat::Hexadecimal),
        ],
    );
    let version = lopdf::encryption::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password: "secret",
        key_length: 128,
        permissions: lopdf::encryption::Permissions::all(),
    };
    let state = lopdf::encryption::EncryptionState::try_from(version).expect("encryption state");
    doc.encrypt(&state).expect("the PDF encrypts");
    save(&mut doc)
}

/// The first `fraction` of `bytes` (a file cut short by a failed download or copy).
pub fn truncate(bytes: &[u8], fraction: f64) -> Vec<u8> {
    bytes[..(bytes.len() as f64 * fraction) as usize].to_vec()
}

fn pages_root(doc: &Document) -> ObjectId {
    doc.catalog()
        .and_then(|c| c.get(b"Pages"))
        .and_then(Object::as_reference)
        .expect("the catalog names its page tree")
}
