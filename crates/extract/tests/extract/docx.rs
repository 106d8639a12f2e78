//! Word documents: headings, lists, tables, page markers, footnotes, title and author.

use artifactflow_extract::{detect, Kind};

use crate::ooxml::{self, after_rendered_break, item, p, page_break, styled, table, Docx};
use crate::{assert_consistent, read};

#[test]
fn headings_lists_and_tables_become_markdown_with_the_title_and_author() {
    let dir = tempfile::tempdir().unwrap();
    let path = Docx::new()
        .properties("Field Report", "Ann Smith")
        .body(styled("Title", "Field Report"))
        .body(styled("Heading1", "Findings"))
        .body(p("The water level rose by 2 m in *March*."))
        .body(styled("Heading2", "Sites"))
        .body(item(1, 0, "North bank"))
        .body(item(1, 1, "Upper pool"))
        .body(item(1, 0, "South bank"))
        .body(styled("Heading3", "Steps"))
        .body(item(2, 0, "Measure"))
        .body(item(2, 0, "Record"))
        .body(table(&[
            &["Site", "Depth"],
            &["North | East", "2.5"],
            &["South", "1.0"],
        ]))
        .write(dir.path(), "report.docx");
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    let meta = collected.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Docx);
    assert_eq!(meta.title.as_deref(), Some("Field Report"));
    assert_eq!(meta.author.as_deref(), Some("Ann Smith"));
    assert_eq!(
        collected.markdown(),
        "<!-- page 1 -->\n\
         # Field Report\n\
         \n\
         # Findings\n\
         \n\
         The water level rose by 2 m in \\*March\\*.\n\
         \n\
         ## Sites\n\
         \n\
         - North bank\n   \
         - Upper pool\n\
         - South bank\n\
         \n\
         ### Steps\n\
         \n\
         1. Measure\n\
         1. Record\n\
         \n\
         | Site | Depth |\n\
         | --- | --- |\n\
         | North \\| East | 2\\.5 |\n\
         | South | 1\\.0 |\n\
         \n"
    );
    let plain = artifactflow_extract::plain_text(&collected.markdown());
    assert!(
        plain.contains("The water level rose by 2 m in *March*."),
        "{plain}"
    );
    assert!(plain.contains("North | East\t2.5"), "{plain}");
}

#[test]
fn page_breaks_and_word_s_last_layout_start_pages_and_a_document_without_them_is_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let paged = Docx::new()
        .body(p("On the first page."))
        .body(page_break())
        // Word writes both kinds at the same place: one new page, not two.
        .body(after_rendered_break("On the second page."))
        .body(after_rendered_break("On the third page."))
        .write(dir.path(), "paged.docx");
    let collected = read(&paged).unwrap();
    assert_consistent(&collected);
    let pages: Vec<Option<u32>> = collected.pages.iter().map(|p| p.page).collect();
    assert_eq!(pages, vec![Some(1), Some(2), Some(3)]);
    assert_eq!(
        collected.markdown(),
        "<!-- page 1 -->\nOn the first page.\n\n\
         <!-- page 2 -->\nOn the second page.\n\n\
         <!-- page 3 -->\nOn the third page.\n\n"
    );
    let third = &collected.pages[2];
    assert_eq!(third.passages.len(), 1);
    assert_eq!(third.passages[0].page, Some(3));

    let flat = Docx::new()
        .body(p("One."))
        .body(p("Two."))
        .write(dir.path(), "flat.docx");
    let collected = read(&flat).unwrap();
    assert_eq!(collected.pages.len(), 1);
    assert_eq!(collected.pages[0].page, Some(1));
}

#[test]
fn tabs_line_breaks_and_footnotes_are_kept_with_the_footnotes_after_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = Docx::new()
        .body(ooxml::runs_with_tab_break_and_footnote(
            "Name",
            "Value",
            "Second line",
        ))
        .body(p("Closing words."))
        .footnote("Measured at noon & dusk.")
        .write(dir.path(), "notes.docx");
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    assert_eq!(
        collected.markdown(),
        "<!-- page 1 -->\n\
         Name Value\n\
         Second line\\[^1\\]\n\
         \n\
         Closing words.\n\
         \n\
         \\[^1\\]: Measured at noon & dusk.\n\
         \n"
    );
}

#[test]
fn a_docx_is_known_by_its_content_and_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(Docx::new().body(p("x")).write(dir.path(), "a.docx")).unwrap();
    let unnamed = crate::fixtures::write(dir.path(), "report", &bytes);
    assert_eq!(detect(&unnamed).unwrap(), Kind::Docx);
    let renamed = crate::fixtures::write(dir.path(), "report.txt", &bytes);
    assert_eq!(detect(&renamed).unwrap(), Kind::Docx);
    // A zip that is no Word document, even named .docx, is damaged, not misread.
    let other = crate::fixtures::write(
        dir.path(),
        "fake.docx",
        &ooxml::zip_of(&[("hello.txt", b"hello")]),
    );
    let err = read(&other).unwrap_err();
    assert_eq!(err.kind, artifactflow_extract::ErrorKind::Damaged);
    assert!(err.message.contains("word/document.xml"), "{}", err.message);
}
