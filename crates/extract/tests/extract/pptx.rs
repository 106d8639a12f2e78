//! PowerPoint presentations: slides in the deck's order, titles as headings, notes after each
//! slide, one marker per slide.

use artifactflow_extract::{detect, plain_text, Kind};

use crate::ooxml::{pptx, SlideSpec};
use crate::{assert_consistent, read};

fn deck(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    pptx(
        dir,
        name,
        &[
            SlideSpec {
                title: "Quarterly review",
                shapes: vec![vec!["Ann Smith", "March 2026"]],
                notes: Some("Welcome everyone."),
            },
            SlideSpec {
                title: "Results",
                shapes: vec![vec!["Revenue up 12%", "Costs flat"], vec!["Source: ledger"]],
                notes: None,
            },
            SlideSpec {
                title: "Next steps",
                shapes: vec![vec!["Hire two engineers"]],
                notes: Some("Ask for questions."),
            },
        ],
        "Q1 Review",
        "Ann Smith",
    )
}

#[test]
fn slides_come_in_the_deck_s_order_with_titles_text_and_notes() {
    let dir = tempfile::tempdir().unwrap();
    let collected = read(&deck(dir.path(), "review.pptx")).unwrap();
    assert_consistent(&collected);
    let meta = collected.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Pptx);
    assert_eq!(meta.pages, Some(3));
    assert_eq!(meta.title.as_deref(), Some("Q1 Review"));
    assert_eq!(meta.author.as_deref(), Some("Ann Smith"));
    assert_eq!(
        collected.markdown(),
        "<!-- slide 1 -->\n\
         # Quarterly review\n\
         \n\
         Ann Smith\n\
         March 2026\n\
         \n\
         Notes:\n\
         Welcome everyone.\n\
         \n\
         <!-- slide 2 -->\n\
         # Results\n\
         \n\
         Revenue up 12%\n\
         Costs flat\n\
         \n\
         Source: ledger\n\
         \n\
         <!-- slide 3 -->\n\
         # Next steps\n\
         \n\
         Hire two engineers\n\
         \n\
         Notes:\n\
         Ask for questions.\n\
         \n"
    );
    let pages: Vec<Option<u32>> = collected.pages.iter().map(|p| p.page).collect();
    assert_eq!(pages, vec![Some(1), Some(2), Some(3)], "slide N is page N");
    let passage = collected
        .passages()
        .find(|p| p.text.contains("Revenue up 12%"))
        .unwrap();
    assert_eq!(passage.page, Some(2));
    let plain = plain_text(&collected.markdown());
    assert!(!plain.contains("slide"), "markers are not text: {plain}");
}

#[test]
fn a_pptx_is_known_by_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(deck(dir.path(), "a.pptx")).unwrap();
    let unnamed = crate::fixtures::write(dir.path(), "deck", &bytes);
    assert_eq!(detect(&unnamed).unwrap(), Kind::Pptx);
}
