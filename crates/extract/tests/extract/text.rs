//! Markdown, plain text and JSON files.

use artifactflow_extract::{plain_text, ErrorKind, Kind, Limits};

use crate::fixtures::write;
use crate::{assert_consistent, read, read_within};

#[test]
fn markdown_is_kept_as_it_is_in_parts_that_join_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = String::from("---\ntitle: Field notes\n---\n\n");
    for section in 0..60 {
        source.push_str(&format!("## Section {section}\n\n"));
        for para in 0..6 {
            source.push_str(&format!(
                "Paragraph {para} of section {section} has *some* words that go on for a while, \
                 so that the file grows well past one part of sixty-four kilobytes.\nIts second \
                 line.\n\n"
            ));
        }
        source.push_str("```\n");
        for line in 0..40 {
            source.push_str(&format!("let code_{line} = \"stays in one part\";\n\n"));
        }
        source.push_str("```\n\n");
    }
    let path = write(dir.path(), "notes.md", source.as_bytes());
    let got = read(&path).unwrap();
    let meta = got.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Markdown);
    assert_eq!(meta.title.as_deref(), Some("Field notes"));
    assert!(
        got.pages.len() >= 2,
        "{} parts: a large file is sent in parts",
        got.pages.len()
    );
    assert_eq!(
        got.markdown(),
        source,
        "the Markdown is the file, unchanged"
    );
    assert!(got.pages.iter().all(|p| p.page.is_none()));
    assert_consistent(&got);
    for page in &got.pages[..got.pages.len() - 1] {
        assert!(page.markdown.ends_with("\n\n"), "parts end at a blank line");
        assert_eq!(
            page.markdown.matches("```").count() % 2,
            0,
            "no part ends inside a code block"
        );
    }
    let text = plain_text(&got.markdown());
    assert!(text.contains("Paragraph 0 of section 0 has some words"));
}

#[test]
fn plain_text_files_read_back_exactly_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let source = "1. Not a list\n# not a heading\nfile_name and *stars*\n<!-- page 2 -->\n\nlast\n";
    let path = write(
        dir.path(),
        "notes.txt",
        format!("\u{FEFF}{}", source.replace('\n', "\r\n")).as_bytes(),
    );
    let got = read(&path).unwrap();
    assert_eq!(got.meta.as_ref().unwrap().kind, Kind::Text);
    assert_eq!(plain_text(&got.markdown()), source);
    assert!(
        !got.markdown()
            .lines()
            .any(|l| artifactflow_extract::markdown::parse_page_marker(l).is_some()),
        "a text cannot forge a page marker"
    );
    assert_consistent(&got);
}

#[test]
fn json_is_fenced_and_one_long_line_is_pretty_printed_value_for_value() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = (0..400)
        .map(|i| format!("{{\"id\":{i},\"name\":\"item {i}\",\"price\":1.10000000000000000001}}"))
        .collect();
    let minified = format!(
        "{{\"items\":[{}],\"zebra\":1,\"apple\":2}}",
        items.join(",")
    );
    assert!(minified.len() > 10 * 1024);
    let got = read(&write(dir.path(), "data.json", minified.as_bytes())).unwrap();
    let markdown = got.markdown();
    assert!(markdown.starts_with("```json\n{\n"), "{}", &markdown[..40]);
    assert!(markdown.ends_with("\n}\n```\n"));
    assert!(markdown.lines().count() > 400, "pretty-printed");
    let body = plain_text(&markdown);
    let squeezed: String = body.split_whitespace().collect();
    let expected: String = minified.split_whitespace().collect();
    assert_eq!(squeezed, expected, "every value as written");
    assert!(
        body.find("\"zebra\"").unwrap() < body.find("\"apple\"").unwrap(),
        "key order kept"
    );
    assert_consistent(&got);

    let small = "{\"a\": [1, 2],\n \"b\": \"*x*\"}\n";
    let got = read(&write(dir.path(), "small.json", small.as_bytes())).unwrap();
    assert_eq!(got.markdown(), format!("```json\n{small}```\n"));
    assert_eq!(plain_text(&got.markdown()), small);
}

#[test]
fn a_line_over_the_limit_stops_reading_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let source = format!("short\n{}\n", "x".repeat(5000));
    let limits = Limits {
        max_line_bytes: 1000,
        ..Limits::default()
    };
    let err = read_within(&write(dir.path(), "long.md", source.as_bytes()), &limits).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Limit);
    assert_eq!(
        err.message,
        "line 2 is longer than 1 KB, over the limit for one line"
    );
}

#[test]
fn unsupported_files_say_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "letter.odt",
        &crate::ooxml::zip_of(&[("content.xml", b"<office:document-content/>")]),
    );
    let err = read(&path).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Unsupported);
    assert_eq!(
        err.message,
        "unsupported format: an OpenDocument text (ODT); the library reads PDF, Word (DOCX), \
         PowerPoint (PPTX), Excel (XLSX), OpenDocument spreadsheets (ODS), CSV, EPUB, web pages \
         (HTML), Markdown, plain text and JSON files"
    );
    let png = write(
        dir.path(),
        "scan.md",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    );
    let err = read(&png).unwrap_err();
    assert!(
        err.message
            .starts_with("unsupported format: an image (PNG)"),
        "{}",
        err.message
    );
}
