//! The lead agent (as shipped) on the user's sources: a real 10-page PDF added through the real
//! extraction worker, `search_library` finding page 7, `read_artifact` reading it by page and
//! by lines, a source refusing changes, and the answer's citations checked against what the
//! calls retrieved — in the live event, the reopened history and the transcript.

use std::path::Path;

use engine::api::library::{self, AddOptions};
use engine::calls::CallStatus;
use engine::citations::Citation;
use engine::conversations::RunStatus;
use engine::events::EngineEvent;
use engine::run::RunOptions;
use test_support::Turn;
use tokio_util::sync::CancellationToken;

use super::harness::{call, Harness};

#[allow(dead_code)]
#[path = "../../../extract/tests/extract/fixtures.rs"]
mod fixtures;

/// A 10-page report whose page 7 alone has the word "quokka"; returns its path.
fn report(dir: &Path) -> std::path::PathBuf {
    let mut doc = fixtures::Doc::new().info("Field report", "A. Author");
    for page in 1..=10 {
        let special = if page == 7 {
            "The quokka was seen near the lake."
        } else {
            "Nothing unusual was seen today."
        };
        let first = format!("Day {page} of the survey began at dawn.");
        doc = doc.page(&[&first, special]);
    }
    doc.write(dir, "report.pdf")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_lead_agent_finds_reads_and_cites_a_page_and_unread_pages_are_unverified() {
    let h = Harness::new(Vec::new(), "openai", RunOptions::default()).await;
    let papers = h.ctx.paths().data_dir.join("papers");
    std::fs::create_dir_all(&papers).unwrap();
    let pdf = report(&papers);
    let added = tokio::task::block_in_place(|| {
        library::add(
            &h.ctx,
            std::slice::from_ref(&pdf),
            &AddOptions::default(),
            &CancellationToken::new(),
            &|_| {},
        )
    })
    .unwrap();
    assert_eq!(added.summary.added, 1, "{:?}", added.summary);
    let id = added.summary.files[0].id.clone().unwrap();
    let folder = papers.to_string_lossy().into_owned();

    h.model.push_turns([
        Turn::text(format!(
            "Searching.\n{}{}{}",
            call("search_library", &[("query", "quokka")]),
            call(
                "search_library",
                &[("query", "quokka"), ("scope", "/elsewhere/entirely")]
            ),
            call(
                "search_library",
                &[("query", "quokka lake"), ("scope", &folder)]
            ),
        )),
        Turn::text(format!(
            "Reading.\n{}{}{}",
            call("read_artifact", &[("id", &id), ("page", "7")]),
            call(
                "read_artifact",
                &[("id", &id), ("offset", "1"), ("limit", "3")]
            ),
            call(
                "update_artifact",
                &[("id", &id), ("old_str", "quokka"), ("new_str", "emu")]
            ),
        )),
        Turn::text(format!(
            "A quokka was seen near the lake [cite: {id}, p. 7]. Every day began at dawn \
             [cite: {id}, p. 4]."
        )),
    ]);
    let outcome = h.run("lead_agent", "Where was the quokka seen?").await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");

    let rows = h
        .ctx
        .with_db(|c| engine::calls::store::list(c, "conv"))
        .unwrap();
    let by_position = |message: usize, position: u32| {
        let mut ids: Vec<i64> = rows.iter().filter_map(|r| r.message_id).collect();
        ids.dedup();
        rows.iter()
            .find(|r| r.message_id == Some(ids[message]) && r.position == position)
            .unwrap()
    };

    // The library's search: page 7 with its citation, the passage, and the handle kept.
    let found = by_position(0, 0);
    assert_eq!(found.status, CallStatus::Succeeded, "{found:?}");
    assert!(
        found
            .result
            .contains(&format!("[cite: {id}, p. 7] Field report (lines")),
        "{}",
        found.result
    );
    assert!(found.result.contains("The quokka was seen near the lake."));
    assert_eq!(found.citations.len(), 1, "{:?}", found.citations);
    assert_eq!(found.citations[0].page, Some(7));
    // Another folder has none of it; the report's own folder has it (both words).
    let elsewhere = by_position(0, 1);
    assert!(
        elsewhere
            .result
            .starts_with("No passage in the sources from /elsewhere/entirely"),
        "{}",
        elsewhere.result
    );
    assert!(elsewhere.citations.is_empty());
    assert_eq!(
        by_position(0, 2).citations.len(),
        1,
        "{:?}",
        by_position(0, 2)
    );

    // Page 7 by page: the slice says which page of how many and where to read on.
    let page = by_position(1, 0);
    assert_eq!(page.status, CallStatus::Succeeded, "{page:?}");
    assert!(
        page.result.contains(r#"page="7" pages="10""#),
        "{}",
        page.result
    );
    assert!(page.result.contains("The quokka was seen"));
    assert!(!page.result.contains("Day 8 of"), "{}", page.result);
    assert!(
        page.result
            .contains(&format!("Next page: read_artifact(id='{id}', page=8)")),
        "{}",
        page.result
    );
    assert_eq!(page.citations[0].page, Some(7));
    // By lines: the pages those lines are on.
    let lines = by_position(1, 1);
    assert_eq!(lines.status, CallStatus::Succeeded, "{lines:?}");
    assert_eq!(
        lines.citations.iter().map(|c| c.page).collect::<Vec<_>>(),
        [Some(1)],
        "{}",
        lines.result
    );
    // A source is the user's: agents cannot change it.
    let change = by_position(1, 2);
    assert_eq!(change.status, CallStatus::Failed);
    assert!(
        change.result.contains("can read but not change"),
        "{}",
        change.result
    );

    // The answer's citations: page 7 was read, page 4 never was.
    let expected = |live: &[Citation]| {
        assert_eq!(live.len(), 2, "{live:?}");
        assert_eq!(live[0].marker, format!("[cite: {id}, p. 7]"));
        assert!(live[0].verified);
        assert_eq!(live[0].title.as_deref(), Some("Field report"));
        assert!(live[0].line_first.is_some());
        assert_eq!(live[1].page, Some(4));
        assert!(!live[1].verified, "page 4 was never retrieved");
        assert_eq!(live[1].title.as_deref(), Some("Field report"));
    };
    let live = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            EngineEvent::ModelAnswer { citations, .. } => Some(citations),
            _ => None,
        })
        .next_back()
        .unwrap();
    expected(&live);
    let history = h
        .ctx
        .with_db(|c| engine::history::history(c, "conv"))
        .unwrap();
    let last = history
        .iter()
        .rev()
        .find(|m| m.message.role == "assistant")
        .unwrap();
    expected(&last.citations);
    assert_eq!(last.citations, live);
    let transcript = h
        .ctx
        .with_db(|c| engine::history::transcript(c, "conv"))
        .unwrap()
        .unwrap();
    let markdown = transcript.to_markdown();
    assert!(
        markdown.contains(&format!(
            "- `[cite: {id}, p. 4]` Field report, page 4 (not retrieved in this conversation)"
        )),
        "{markdown}"
    );
    expected(&transcript.messages.last().unwrap().citations);
    // The lead agent was told how to cite.
    assert!(
        h.system_prompt(0)
            .contains("[cite: src_3f2a9c1b7d4e, p. 7]"),
        "{}",
        h.system_prompt(0)
    );
}
