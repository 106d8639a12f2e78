//! Web pages: the main content kept, navigation and boilerplate dropped, any encoding read.

use artifactflow_extract::{plain_text, Kind};

use crate::fixtures::write;
use crate::{assert_consistent, read};

/// An article page with the boilerplate of a news site around it.
fn article_page(charset_meta: &str, body_words: &str) -> String {
    let paragraph = |i: usize| {
        format!(
            "<p>Paragraph {i} of the report on river levels: {body_words} The survey teams \
             walked every bank, measured the depth at noon, and wrote down what they found \
             in their notebooks before the rain came back in the evening.</p>"
        )
    };
    let paragraphs: String = (1..=6).map(paragraph).collect();
    format!(
        "<!DOCTYPE html><html><head>{charset_meta}<title>Rising river levels this spring | Daily Site</title>\
         <style>.x{{color:red}}</style><script>var trackingWords = 1;</script></head><body>\
         <header><a href=\"/\">Daily Site home</a></header>\
         <nav><ul><li><a href=\"/sport\">Sportsmenu</a></li><li><a href=\"/weather\">Weathermenu</a></li></ul></nav>\
         <main><article><h1>Rising river levels this spring</h1><p class=\"byline\">By Ann Smith</p>\
         <h2>What was measured</h2>{paragraphs}\
         <ul><li>North bank</li><li>South bank</li></ul>\
         <table><thead><tr><th>Site</th><th>Depth</th></tr></thead>\
         <tbody><tr><td>North</td><td>2.5</td></tr></tbody></table>\
         </article></main>\
         <aside>Sidebarpromo: subscribe now</aside>\
         <footer>Copyrightfooter 2026 Daily Site. Cookie settings.</footer></body></html>"
    )
}

#[test]
fn an_article_keeps_its_text_headings_lists_and_tables_and_drops_the_boilerplate() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "river.html",
        article_page("<meta charset=\"utf-8\">", "").as_bytes(),
    );
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    let meta = collected.meta.as_ref().unwrap();
    assert_eq!(meta.kind, Kind::Html);
    assert_eq!(
        meta.title.as_deref(),
        Some("Rising river levels this spring")
    );
    assert_eq!(meta.author.as_deref(), Some("By Ann Smith"));
    let markdown = collected.markdown();
    assert!(markdown.contains("## What was measured"), "{markdown}");
    assert!(markdown.contains("Paragraph 6 of the report"), "{markdown}");
    assert!(markdown.contains("North bank"), "{markdown}");
    assert!(
        markdown.contains("| North | 2.5   |"),
        "a table row: {markdown}"
    );
    for boilerplate in [
        "Sportsmenu",
        "Weathermenu",
        "Daily Site home",
        "Sidebarpromo",
        "Copyrightfooter",
        "trackingWords",
        "color:red",
    ] {
        assert!(
            !markdown.contains(boilerplate),
            "{boilerplate} in {markdown}"
        );
    }
    assert!(
        collected.pages.iter().all(|p| p.page.is_none()),
        "no page markers"
    );
    assert!(plain_text(&markdown).contains("Paragraph 1 of the report on river levels"));
}

#[test]
fn a_page_that_is_not_an_article_keeps_its_body_without_navigation() {
    let dir = tempfile::tempdir().unwrap();
    let page = "<html><head><title>Index</title></head><body>\
                <nav>Homemenu Aboutmenu</nav><h1>Index</h1>\
                <ul><li>alpha</li><li>beta</li></ul>\
                <footer>Footerwords</footer></body></html>";
    let path = write(dir.path(), "index.htm", page.as_bytes());
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    let markdown = collected.markdown();
    assert!(markdown.contains("# Index"), "{markdown}");
    assert!(
        markdown.contains("alpha") && markdown.contains("beta"),
        "{markdown}"
    );
    assert!(!markdown.contains("Homemenu"), "{markdown}");
    assert!(!markdown.contains("Footerwords"), "{markdown}");
    assert_eq!(
        collected.meta.as_ref().unwrap().title.as_deref(),
        Some("Index")
    );
}

#[test]
fn pages_in_legacy_encodings_are_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let words = "Le café était déjà prêt à côté de la rivière.";
    // Declared by <meta charset>.
    let declared = article_page("<meta charset=\"windows-1252\">", words);
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&declared);
    let path = write(dir.path(), "declared.html", &bytes);
    let markdown = read(&path).unwrap().markdown();
    assert!(markdown.contains(words), "{markdown}");
    // Not declared at all: guessed from the bytes.
    let undeclared = article_page("", words);
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&undeclared);
    let path = write(dir.path(), "undeclared.html", &bytes);
    let markdown = read(&path).unwrap().markdown();
    assert!(markdown.contains(words), "{markdown}");
    // UTF-16 with a byte-order mark (characters beyond Latin-1, which a byte-wise decoding
    // would garble).
    let words = "Der Preis: 5 € – Ωmega.";
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(
        article_page("", words)
            .encode_utf16()
            .flat_map(u16::to_le_bytes),
    );
    let path = write(dir.path(), "utf16.html", &utf16);
    let markdown = read(&path).unwrap().markdown();
    assert!(markdown.contains(words), "{markdown}");
}
