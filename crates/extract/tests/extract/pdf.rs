//! PDFs made by lopdf, read in this process through the real pdfium.

use artifactflow_extract::markdown::parse_page_marker;
use artifactflow_extract::{plain_text, ErrorKind, Kind, Limits};

use crate::fixtures::Doc;
use crate::{assert_consistent, lines_of, read, read_within};

/// Ten pages: i–vii then 1–3, a running header, "Page N of 10" footers, a title and author.
fn report() -> Doc {
    let mut doc = Doc::new()
        .header("ACME Quarterly Report")
        .footer_page_numbers()
        .roman_front_matter(7)
        .info("Quarterly Report", "Ann Author");
    let topics = [
        "sales", "costs", "staff", "plans", "risks", "stock", "taxes", "loans", "sites", "goals",
    ];
    for (n, topic) in (1..=10).zip(topics) {
        let body = format!("Body of page {n} talks about topic number {}.", n * 11);
        let second = format!("A second line says more about {topic}.");
        doc = doc.page(&[&body, &second]);
    }
    doc
}

#[test]
fn pages_carry_markers_labels_and_the_files_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let got = read(&report().write(dir.path(), "report.pdf")).unwrap();
    let meta = got.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Pdf);
    assert_eq!(meta.pages, Some(10));
    assert_eq!(meta.title.as_deref(), Some("Quarterly Report"));
    assert_eq!(meta.author.as_deref(), Some("Ann Author"));
    assert_eq!(got.pages.len(), 10);
    assert!(got.progress_reports >= 10, "progress after every page");

    let markdown = got.markdown();
    let lines = lines_of(&markdown);
    let markers: Vec<(usize, (u32, Option<String>))> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, l)| parse_page_marker(l).map(|m| (i + 1, m)))
        .collect();
    assert_eq!(markers.len(), 10);
    assert_eq!(lines[markers[6].0 - 1], "<!-- page 7 (vii) -->");
    assert_eq!(lines[markers[7].0 - 1], "<!-- page 8 (1) -->");
    for (page, (line, (number, label))) in got.pages.iter().zip(&markers) {
        assert_eq!(
            page.first_line as usize, *line,
            "each page starts at its marker"
        );
        assert_eq!(page.page, Some(*number));
        assert_eq!(&page.label, label);
    }
    let page7 = &got.pages[6];
    assert!(page7
        .markdown
        .contains("Body of page 7 talks about topic number 77."));
    assert_eq!(page7.passages.len(), 1);
    assert!(page7.passages[0].text.contains("topic number 77"));
    assert_consistent(&got);
}

#[test]
fn running_headers_and_footers_are_marked_and_left_out_of_text_and_passages() {
    let dir = tempfile::tempdir().unwrap();
    let got = read(&report().write(dir.path(), "report.pdf")).unwrap();
    let page3 = &got.pages[2].markdown;
    assert!(
        page3.contains("<!-- running header: ACME Quarterly Report -->\n"),
        "{page3}"
    );
    assert!(
        page3.contains("<!-- running footer: Page 3 of 10 -->\n"),
        "{page3}"
    );
    let text = plain_text(&got.markdown());
    assert!(!text.contains("ACME"), "{text}");
    assert!(!text.contains("of 10"), "{text}");
    assert!(
        !text.contains("<!--") && !text.contains("page 7 (vii)"),
        "{text}"
    );
    assert!(
        text.starts_with("Body of page 1 talks about topic number 11.\n"),
        "{text}"
    );
    assert_eq!(
        text.lines().count(),
        20,
        "two lines per page, pages joined: {text}"
    );
    for passage in got.passages() {
        assert!(!passage.text.contains("ACME") && !passage.text.contains("of 10"));
    }
    let warning = &got_summary(&report().write(dir.path(), "again.pdf")).warnings;
    assert!(
        warning.iter().any(|w| w.kind == "running_lines"),
        "{warning:?}"
    );
}

fn got_summary(path: &std::path::Path) -> artifactflow_extract::Summary {
    let mut sink = artifactflow_extract::Collected::default();
    artifactflow_extract::extract(path, &Limits::default(), &mut sink).unwrap()
}

#[test]
fn hyphenated_words_are_joined_conservatively_and_ligatures_spelled_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = Doc::new()
        .page(&[
            "The extrac-",
            "tion of words, said Smith-",
            "Jones, is 3 -",
            "4 lines long.",
        ])
        .ligature_line("A ", "ne day")
        .write(dir.path(), "hyphens.pdf");
    let got = read(&path).unwrap();
    let text = plain_text(&got.markdown());
    assert!(
        text.contains("The extraction of words, said Smith-\nJones, is 3 -\n4 lines long."),
        "{text:?}"
    );
    assert!(
        text.contains("A fine day"),
        "the ligature glyph reads as its letters: {text:?}"
    );
    assert!(
        !text.contains('\u{FB01}') && !text.contains('\u{2}'),
        "{text:?}"
    );
}

#[test]
fn passages_name_the_lines_they_come_from_and_plain_text_has_no_markup() {
    let dir = tempfile::tempdir().unwrap();
    let path = Doc::new()
        .header("Running Title")
        .footer_page_numbers()
        .pages_of_words(4, 45)
        .page(&[
            "1. Not a list but a line that starts with a number.",
            "Stars *here* stay.",
        ])
        .write(dir.path(), "long.pdf");
    let got = read(&path).unwrap();
    assert_consistent(&got);
    assert!(
        got.pages[0].passages.len() >= 2,
        "a long page has several passages"
    );
    let text = plain_text(&got.markdown());
    assert!(!text.contains("<!--") && !text.contains("Running Title"));
    assert!(
        text.contains(
            "\n1. Not a list but a line that starts with a number.\nStars *here* stay.\n"
        ),
        "{text}"
    );
    let markdown = got.markdown();
    assert!(
        markdown.contains("1\\. Not a list"),
        "escaped in the Markdown"
    );
    // The passage of page 5 holds its text as Markdown, on the lines it names.
    let last = got.pages[4].passages.last().unwrap();
    assert_eq!(last.page, Some(5));
    let lines = lines_of(&markdown);
    assert_eq!(lines[last.line_last as usize - 1], "Stars \\*here\\* stay.");
}

#[test]
fn a_pdf_of_images_only_is_scanned_with_its_pages_as_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let mut doc = Doc::new();
    for _ in 0..12 {
        doc = doc.image_only_page();
    }
    let err = read(&doc.write(dir.path(), "scan.pdf")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Scanned);
    assert_eq!(err.message, "no text on pages 1–12: scanned");
}

#[test]
fn scanned_pages_among_text_pages_are_kept_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = Doc::new()
        .page(&["Typed page one."])
        .image_only_page()
        .image_only_page()
        .page(&["Typed page four."])
        .write(dir.path(), "mixed.pdf");
    let mut sink = artifactflow_extract::Collected::default();
    let summary = artifactflow_extract::extract(&path, &Limits::default(), &mut sink).unwrap();
    assert_eq!(summary.pages, 4);
    assert_eq!(summary.pages_with_text, 2);
    let scanned = summary
        .warnings
        .iter()
        .find(|w| w.kind == "scanned")
        .unwrap();
    assert_eq!(scanned.pages, vec![2, 3]);
    assert!(
        scanned.message.starts_with("no text on pages 2–3: scanned"),
        "{}",
        scanned.message
    );
    assert!(!sink.pages[1].has_text);
    assert!(sink.pages[1]
        .markdown
        .contains("<!-- no text on this page: scanned"));
    assert!(sink.pages[1].passages.is_empty());
    assert_consistent(&sink);
}

#[test]
fn limits_on_pages_and_file_size_stop_with_a_located_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = Doc::new()
        .pages_of_words(3, 2)
        .write(dir.path(), "three.pdf");
    let pages = Limits {
        max_pages: 2,
        ..Limits::default()
    };
    let err = read_within(&path, &pages).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Limit);
    assert_eq!(
        err.message,
        "the PDF has 3 pages, over the limit of 2 pages for one source"
    );
    let size = Limits {
        max_file_bytes: Some(100),
        ..Limits::default()
    };
    let err = read_within(&path, &size).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TooLarge);
    assert!(
        err.message.starts_with("the file is ") && err.message.contains("over the 100 bytes limit"),
        "{}",
        err.message
    );
}
