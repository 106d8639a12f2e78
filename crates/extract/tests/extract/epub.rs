//! EPUB books: chapters in the spine's order, one marker each, title and author.

use artifactflow_extract::{detect, Kind};

use crate::ooxml::epub;
use crate::{assert_consistent, read};

#[test]
fn chapters_come_in_reading_order_under_their_markers_with_title_and_author() {
    let dir = tempfile::tempdir().unwrap();
    let path = epub(
        dir.path(),
        "book.epub",
        "The River",
        "Ann Smith",
        &[
            "<h1>Chapter One</h1><p>The water rose.</p>",
            "<div> </div>",
            "<nav><ol><li>Contentsmenu</li></ol></nav><h1>Chapter Two</h1><ul><li>North</li><li>South</li></ul>",
        ],
    );
    assert_eq!(detect(&path).unwrap(), Kind::Epub);
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    let meta = collected.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Epub);
    assert_eq!(meta.pages, Some(3));
    assert_eq!(meta.title.as_deref(), Some("The River"));
    assert_eq!(meta.author.as_deref(), Some("Ann Smith"));
    let markdown = collected.markdown();
    assert_eq!(
        markdown,
        "<!-- chapter 1 -->\n# Chapter One\n\nThe water rose.\n\n\
         <!-- chapter 2 -->\n<!-- no text on this page: blank -->\n\n\
         <!-- chapter 3 -->\n# Chapter Two\n\n*   North\n*   South\n\n",
    );
    let passage = collected
        .passages()
        .find(|p| p.text.contains("North"))
        .unwrap();
    assert_eq!(passage.page, Some(3), "chapter 3 is page 3");
}
