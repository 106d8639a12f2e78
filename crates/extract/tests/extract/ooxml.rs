//! Word documents (DOCX) made by code for the tests (nothing binary is committed), written with
//! the `zip` crate: the parts Word writes, with the XML Word uses for headings, lists, tables,
//! page breaks and footnotes. [`bomb`] and [`lying_header`] are hostile on purpose.

use std::io::Write;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// `text` escaped for XML.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A paragraph of plain text.
pub fn p(text: &str) -> String {
    format!(
        "<w:p><w:r><w:t xml:space=\"preserve\">{}</w:t></w:r></w:p>",
        xml(text)
    )
}

/// A paragraph with the style `style` ("Title", "Heading2").
pub fn styled(style: &str, text: &str) -> String {
    format!(
        "<w:p><w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>",
        xml(text)
    )
}

/// A list item of list `num_id` at `level`.
pub fn item(num_id: u32, level: u32, text: &str) -> String {
    format!(
        "<w:p><w:pPr><w:pStyle w:val=\"ListParagraph\"/><w:numPr><w:ilvl w:val=\"{level}\"/>\
         <w:numId w:val=\"{num_id}\"/></w:numPr></w:pPr><w:r><w:t>{}</w:t></w:r></w:p>",
        xml(text)
    )
}

/// A table; the first row is its header.
pub fn table(rows: &[&[&str]]) -> String {
    let mut out = String::from("<w:tbl><w:tblPr/>");
    for row in rows {
        out.push_str("<w:tr>");
        for cell in *row {
            out.push_str(&format!("<w:tc><w:tcPr/>{}</w:tc>", p(cell)));
        }
        out.push_str("</w:tr>");
    }
    out.push_str("</w:tbl>");
    out
}

/// A paragraph that is an explicit page break, as Word writes Ctrl+Enter.
pub fn page_break() -> String {
    "<w:p><w:r><w:br w:type=\"page\"/></w:r></w:p>".to_string()
}

/// A paragraph that starts where Word's last layout started a new page.
pub fn after_rendered_break(text: &str) -> String {
    format!(
        "<w:p><w:r><w:lastRenderedPageBreak/><w:t>{}</w:t></w:r></w:p>",
        xml(text)
    )
}

/// A paragraph with runs separated by a tab and a line break, and a footnote reference.
pub fn runs_with_tab_break_and_footnote(before: &str, after_tab: &str, next_line: &str) -> String {
    format!(
        "<w:p><w:r><w:t>{}</w:t><w:tab/><w:t>{}</w:t><w:br/><w:t>{}</w:t></w:r>\
         <w:r><w:footnoteReference w:id=\"1\"/></w:r></w:p>",
        xml(before),
        xml(after_tab),
        xml(next_line)
    )
}

/// A DOCX to be written.
#[derive(Default)]
pub struct Docx {
    body: Vec<String>,
    title: Option<String>,
    author: Option<String>,
    footnotes: Vec<String>,
}

impl Docx {
    /// An empty document.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds body XML (from [`p`], [`styled`], [`item`], [`table`]…).
    pub fn body(mut self, xml: impl Into<String>) -> Self {
        self.body.push(xml.into());
        self
    }

    /// Sets `dc:title` and `dc:creator` in `docProps/core.xml`.
    pub fn properties(mut self, title: &str, author: &str) -> Self {
        self.title = Some(title.into());
        self.author = Some(author.into());
        self
    }

    /// Adds a footnote (ids from 1).
    pub fn footnote(mut self, text: &str) -> Self {
        self.footnotes.push(text.into());
        self
    }

    /// The document's parts, in the order Word writes them.
    fn parts(&self) -> Vec<(String, Vec<u8>)> {
        let mut parts = vec![(
            "[Content_Types].xml".to_string(),
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>".to_vec(),
        )];
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document \
             xmlns:w=\"{W}\"><w:body>{}<w:sectPr/></w:body></w:document>",
            self.body.concat()
        );
        parts.push(("word/document.xml".into(), document.into_bytes()));
        // Item lists: numId 1 is bullets, numId 2 is numbered.
        let numbering = format!(
            "<w:numbering xmlns:w=\"{W}\">\
             <w:abstractNum w:abstractNumId=\"0\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"bullet\"/></w:lvl><w:lvl w:ilvl=\"1\"><w:numFmt w:val=\"bullet\"/></w:lvl></w:abstractNum>\
             <w:abstractNum w:abstractNumId=\"1\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"decimal\"/></w:lvl></w:abstractNum>\
             <w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/></w:num>\
             <w:num w:numId=\"2\"><w:abstractNumId w:val=\"1\"/></w:num></w:numbering>"
        );
        parts.push(("word/numbering.xml".into(), numbering.into_bytes()));
        if !self.footnotes.is_empty() {
            let mut notes = format!(
                "<w:footnotes xmlns:w=\"{W}\"><w:footnote w:type=\"separator\" w:id=\"-1\">\
                 <w:p><w:r><w:separator/></w:r></w:p></w:footnote>"
            );
            for (i, text) in self.footnotes.iter().enumerate() {
                notes.push_str(&format!(
                    "<w:footnote w:id=\"{}\"><w:p><w:r><w:t>{}</w:t></w:r></w:p></w:footnote>",
                    i + 1,
                    xml(text)
                ));
            }
            notes.push_str("</w:footnotes>");
            parts.push(("word/footnotes.xml".into(), notes.into_bytes()));
        }
        if let (Some(title), Some(author)) = (&self.title, &self.author) {
            let core = format!(
                "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" \
                 xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{}</dc:title>\
                 <dc:creator>{}</dc:creator></cp:coreProperties>",
                xml(title),
                xml(author)
            );
            parts.push(("docProps/core.xml".into(), core.into_bytes()));
        }
        parts
    }

    /// Writes the document to `dir/name`.
    pub fn write(&self, dir: &Path, name: &str) -> PathBuf {
        let parts = self.parts();
        let borrowed: Vec<(&str, &[u8])> = parts
            .iter()
            .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
            .collect();
        let path = dir.join(name);
        std::fs::write(&path, zip_of(&borrowed)).unwrap();
        path
    }
}

/// A zip archive of these entries, deflated.
pub fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in entries {
        writer
            .start_file(
                *name,
                SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated),
            )
            .unwrap();
        writer.write_all(bytes).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A DOCX whose `word/document.xml` is `size` zero bytes: tiny on disk, huge unpacked.
pub fn bomb(size: usize) -> Vec<u8> {
    zip_of(&[
        ("[Content_Types].xml", b"<Types/>"),
        ("word/document.xml", &vec![0u8; size]),
    ])
}

/// A DOCX whose `word/document.xml` is `size` bytes of text but whose headers (local and
/// central) declare it to be 1,000 bytes.
pub fn lying_header(size: usize) -> Vec<u8> {
    let mut document = format!("<w:document xmlns:w=\"{W}\"><w:body><w:p><w:r><w:t>").into_bytes();
    document.resize(size, b'a');
    let mut bytes = zip_of(&[("word/document.xml", &document)]);
    let declared = 1000u32.to_le_bytes();
    assert_eq!(&bytes[..4], b"PK\x03\x04");
    bytes[22..26].copy_from_slice(&declared);
    let central = bytes
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("a central directory");
    bytes[central + 24..central + 28].copy_from_slice(&declared);
    bytes
}

const P: &str = "http://schemas.openxmlformats.org/presentationml/2006/main";
const A: &str = "http://schemas.openxmlformats.org/drawingml/2006/main";
const R: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A shape with a placeholder of `placeholder` type (`None` for a plain text box) and these
/// paragraphs.
fn shape(placeholder: Option<&str>, paragraphs: &[&str]) -> String {
    let ph = match placeholder {
        Some(kind) => format!("<p:ph type=\"{kind}\"/>"),
        None => String::new(),
    };
    let body: String = paragraphs
        .iter()
        .map(|text| {
            format!(
                "<a:p><a:r><a:rPr lang=\"en-US\"/><a:t>{}</a:t></a:r></a:p>",
                xml(text)
            )
        })
        .collect();
    format!(
        "<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"Shape\"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr>\
         </p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{body}</p:txBody></p:sp>"
    )
}

/// One slide: a title, text boxes, speaker notes.
pub struct SlideSpec {
    /// The title placeholder's text.
    pub title: &'static str,
    /// The other shapes, each with its paragraphs.
    pub shapes: Vec<Vec<&'static str>>,
    /// The speaker notes, if any.
    pub notes: Option<&'static str>,
}

/// A PPTX whose slides are `slides` in this order, stored in the package under file names
/// numbered in the reverse order (as after slides were moved in PowerPoint).
pub fn pptx(dir: &Path, name: &str, slides: &[SlideSpec], title: &str, author: &str) -> PathBuf {
    let count = slides.len();
    let mut parts: Vec<(String, Vec<u8>)> = vec![(
        "[Content_Types].xml".into(),
        b"<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>".to_vec(),
    )];
    let mut ids = String::new();
    let mut rels = String::new();
    for (index, slide) in slides.iter().enumerate() {
        let file_number = count - index;
        ids.push_str(&format!(
            "<p:sldId id=\"{}\" r:id=\"rId{}\"/>",
            256 + index,
            10 + index
        ));
        rels.push_str(&format!(
            "<Relationship Id=\"rId{}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide\" Target=\"slides/slide{file_number}.xml\"/>",
            10 + index
        ));
        let mut tree = shape(Some("title"), &[slide.title]);
        for paragraphs in &slide.shapes {
            tree.push_str(&shape(None, paragraphs));
        }
        parts.push((
            format!("ppt/slides/slide{file_number}.xml"),
            format!(
                "<p:sld xmlns:p=\"{P}\" xmlns:a=\"{A}\" xmlns:r=\"{R}\"><p:cSld><p:spTree>{tree}</p:spTree></p:cSld></p:sld>"
            )
            .into_bytes(),
        ));
        if let Some(notes) = slide.notes {
            parts.push((
                format!("ppt/slides/_rels/slide{file_number}.xml.rels"),
                format!(
                    "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\
                     <Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide\" Target=\"../notesSlides/notesSlide{file_number}.xml\"/></Relationships>"
                )
                .into_bytes(),
            ));
            let notes_tree = format!(
                "{}{}{}",
                shape(Some("sldImg"), &[]),
                shape(Some("body"), &[notes]),
                shape(Some("sldNum"), &[&file_number.to_string()])
            );
            parts.push((
                format!("ppt/notesSlides/notesSlide{file_number}.xml"),
                format!(
                    "<p:notes xmlns:p=\"{P}\" xmlns:a=\"{A}\"><p:cSld><p:spTree>{notes_tree}</p:spTree></p:cSld></p:notes>"
                )
                .into_bytes(),
            ));
        }
    }
    parts.push((
        "ppt/presentation.xml".into(),
        format!(
            "<p:presentation xmlns:p=\"{P}\" xmlns:r=\"{R}\"><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"
        )
        .into_bytes(),
    ));
    parts.push((
        "ppt/_rels/presentation.xml.rels".into(),
        format!(
            "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">{rels}</Relationships>"
        )
        .into_bytes(),
    ));
    parts.push((
        "docProps/core.xml".into(),
        format!(
            "<cp:coreProperties xmlns:cp=\"c\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\
             <dc:title>{}</dc:title><dc:creator>{}</dc:creator></cp:coreProperties>",
            xml(title),
            xml(author)
        )
        .into_bytes(),
    ));
    let borrowed: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, zip_of(&borrowed)).unwrap();
    path
}

/// An XLSX with these sheets (name, rows of cells; cells that parse as numbers are numbers,
/// the others inline strings), written as Excel lays its parts out.
pub fn xlsx(dir: &Path, name: &str, sheets: &[(&str, Vec<Vec<String>>)]) -> PathBuf {
    const S: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    let mut overrides = String::new();
    let mut entries = String::new();
    let mut rels = String::new();
    for (index, (sheet_name, rows)) in sheets.iter().enumerate() {
        let n = index + 1;
        overrides.push_str(&format!("<Override PartName=\"/xl/worksheets/sheet{n}.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml\"/>"));
        entries.push_str(&format!(
            "<sheet name=\"{}\" sheetId=\"{n}\" r:id=\"rId{n}\"/>",
            xml(sheet_name)
        ));
        rels.push_str(&format!("<Relationship Id=\"rId{n}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet\" Target=\"worksheets/sheet{n}.xml\"/>"));
        let mut data = String::new();
        for (r, row) in rows.iter().enumerate() {
            data.push_str(&format!("<row r=\"{}\">", r + 1));
            for (c, cell) in row.iter().enumerate() {
                let reference = format!("{}{}", (b'A' + c as u8) as char, r + 1);
                if cell.parse::<f64>().is_ok() {
                    data.push_str(&format!("<c r=\"{reference}\"><v>{cell}</v></c>"));
                } else {
                    data.push_str(&format!(
                        "<c r=\"{reference}\" t=\"inlineStr\"><is><t>{}</t></is></c>",
                        xml(cell)
                    ));
                }
            }
            data.push_str("</row>");
        }
        parts.push((
            format!("xl/worksheets/sheet{n}.xml"),
            format!("<worksheet xmlns=\"{S}\"><sheetData>{data}</sheetData></worksheet>")
                .into_bytes(),
        ));
    }
    parts.insert(0, ("[Content_Types].xml".into(), format!("<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/>{overrides}</Types>").into_bytes()));
    parts.insert(
        1,
        (
            "xl/workbook.xml".into(),
            format!(
                "<workbook xmlns=\"{S}\" xmlns:r=\"{R}\"><sheets>{entries}</sheets></workbook>"
            )
            .into_bytes(),
        ),
    );
    parts.insert(1, ("_rels/.rels".into(), b"<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>".to_vec()));
    parts.insert(3, ("xl/_rels/workbook.xml.rels".into(), format!("<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">{rels}</Relationships>").into_bytes()));
    let borrowed: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, zip_of(&borrowed)).unwrap();
    path
}

/// An EPUB whose spine lists `chapters` (XHTML bodies) in this order; the manifest lists them
/// in the reverse order, so only the spine gives the reading order.
pub fn epub(dir: &Path, name: &str, title: &str, author: &str, chapters: &[&str]) -> PathBuf {
    let mut parts: Vec<(String, Vec<u8>)> = vec![
        ("mimetype".into(), b"application/epub+zip".to_vec()),
        (
            "META-INF/container.xml".into(),
            b"<?xml version=\"1.0\"?><container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\"><rootfiles><rootfile full-path=\"OEBPS/content.opf\" media-type=\"application/oebps-package+xml\"/></rootfiles></container>".to_vec(),
        ),
    ];
    let mut manifest = String::new();
    let mut spine = String::new();
    for index in (0..chapters.len()).rev() {
        manifest.push_str(&format!(
            "<item id=\"c{index}\" href=\"text/ch{index}.xhtml\" media-type=\"application/xhtml+xml\"/>"
        ));
    }
    for (index, body) in chapters.iter().enumerate() {
        spine.push_str(&format!("<itemref idref=\"c{index}\"/>"));
        parts.push((
            format!("OEBPS/text/ch{index}.xhtml"),
            format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>ch</title></head><body>{body}</body></html>"
            )
            .into_bytes(),
        ));
    }
    parts.push((
        "OEBPS/content.opf".into(),
        format!(
            "<?xml version=\"1.0\"?><package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\">\
             <metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>{}</dc:title>\
             <dc:creator>{}</dc:creator></metadata><manifest>{manifest}</manifest>\
             <spine>{spine}</spine></package>",
            xml(title),
            xml(author)
        )
        .into_bytes(),
    ));
    let borrowed: Vec<(&str, &[u8])> = parts
        .iter()
        .map(|(name, bytes)| (name.as_str(), bytes.as_slice()))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, zip_of(&borrowed)).unwrap();
    path
}
