//! Spreadsheets and CSV files: one table per sheet, the header repeated every 50 rows, sheet
//! markers, any encoding of CSV.

use artifactflow_extract::{detect, plain_text, Kind};

use crate::fixtures::write;
use crate::ooxml::xlsx;
use crate::{assert_consistent, read};

fn rows(header: &[&str], count: usize) -> Vec<Vec<String>> {
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect()];
    for i in 1..=count {
        rows.push(vec![format!("item {i}"), format!("{}", i * 10)]);
    }
    rows
}

#[test]
fn each_sheet_is_a_marked_table_with_its_header_repeated_every_fifty_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = xlsx(
        dir.path(),
        "budget.xlsx",
        &[
            ("Budget", rows(&["Item", "Cost"], 120)),
            ("Empty", Vec::new()),
            ("Notes", vec![vec!["Say | hi".to_string()]]),
        ],
    );
    assert_eq!(detect(&path).unwrap(), Kind::Xlsx);
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    assert_eq!(collected.meta.as_ref().unwrap().pages, Some(3));
    let markdown = collected.markdown();
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines[0], "<!-- sheet 1 (Budget) -->");
    assert_eq!(lines[1], "| Item | Cost |");
    assert_eq!(lines[2], "| --- | --- |");
    assert_eq!(lines[3], "| item 1 | 10 |");
    let headers = lines.iter().filter(|l| **l == "| Item | Cost |").count();
    assert_eq!(
        headers, 3,
        "rows 1–50, 51–100, 101–120 each under the header"
    );
    let at = lines
        .iter()
        .position(|l| *l == "| item 51 | 510 |")
        .unwrap();
    assert_eq!(lines[at - 2], "| Item | Cost |");
    assert!(markdown.contains("<!-- sheet 2 (Empty) -->\n<!-- no text on this page: blank -->"));
    assert!(
        markdown.contains("<!-- sheet 3 (Notes) -->\n| Say \\| hi |"),
        "{markdown}"
    );
    let last = collected
        .passages()
        .find(|p| p.text.contains("item 120"))
        .unwrap();
    assert_eq!(last.page, Some(1), "sheet 1 is page 1");
    assert!(
        last.text.contains("| Item | Cost |"),
        "the passage has its header: {last:?}"
    );
}

#[test]
fn csv_files_become_tables_in_their_own_encoding_and_delimiter() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Name;Ville\nRené;Besançon\nZoë;Orléans\n";
    let (latin1, _, _) = encoding_rs::WINDOWS_1252.encode(text);
    let path = write(dir.path(), "people.csv", &latin1);
    assert_eq!(detect(&path).unwrap(), Kind::Csv);
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    assert_eq!(
        collected.markdown(),
        "| Name | Ville |\n| --- | --- |\n| René | Besançon |\n| Zoë | Orléans |\n"
    );
    assert!(plain_text(&collected.markdown()).contains("René\tBesançon"));

    let quoted = "a,b\n\"x, with comma\",\"two\nlines\"\n";
    let path = write(dir.path(), "quoted.csv", quoted.as_bytes());
    assert_eq!(
        read(&path).unwrap().markdown(),
        "| a | b |\n| --- | --- |\n| x, with comma | two lines |\n"
    );
}

#[test]
fn a_long_csv_is_sent_in_parts_that_each_start_with_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("word,number\n");
    for i in 0..5000 {
        text.push_str(&format!("word{i} and some padding text,{i}\n"));
    }
    let path = write(dir.path(), "long.csv", text.as_bytes());
    let collected = read(&path).unwrap();
    assert_consistent(&collected);
    assert!(collected.pages.len() > 1, "sent in parts");
    for page in &collected.pages {
        assert!(
            page.markdown
                .starts_with("| word | number |\n| --- | --- |\n"),
            "{}",
            &page.markdown[..80]
        );
    }
    assert!(collected
        .markdown()
        .contains("| word4999 and some padding text | 4999 |"));
}
