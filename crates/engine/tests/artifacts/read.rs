use crate::support::{env, err};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn whole_artifact_in_one_envelope() {
    let e = env();
    e.create("doc", "alpha\nbeta\n").await;
    let r = e.call("read_artifact", &[("id", "doc")]).await;
    assert!(r.success, "{r:?}");
    assert_eq!(
        r.data,
        "<artifact_slice id=\"doc\" version=\"1\" content_type=\"text/markdown\" total_lines=\"2\" shown_lines=\"1-2\" has_more=\"false\" truncated_by=\"none\">\nalpha\nbeta\n</artifact_slice>"
    );
}

#[tokio::test]
async fn paging_with_offset_and_limit_gives_a_continue_hint() {
    let e = env();
    e.create("doc", &numbered(5000)).await;
    let r = e
        .call(
            "read_artifact",
            &[("id", "doc"), ("offset", "3000"), ("limit", "3")],
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(r.data.contains("total_lines=\"5000\" shown_lines=\"3000-3002\" has_more=\"true\" truncated_by=\"limit\""), "{}", r.data);
    assert!(
        r.data
            .contains(">\nline 3000\nline 3001\nline 3002\n</artifact_slice>"),
        "{}",
        r.data
    );
    assert!(
        r.data
            .ends_with("To continue: read_artifact(id='doc', offset=3003)"),
        "{}",
        r.data
    );
    // Exactly at the stride boundaries of the line index.
    for offset in [1024usize, 1025, 2048, 4097] {
        let r = e
            .call(
                "read_artifact",
                &[
                    ("id", "doc"),
                    ("offset", &offset.to_string()),
                    ("limit", "1"),
                ],
            )
            .await;
        assert!(
            r.data
                .contains(&format!(">\nline {offset}\n</artifact_slice>")),
            "{offset}: {}",
            r.data
        );
    }
}

#[tokio::test]
async fn the_last_page_has_no_more() {
    let e = env();
    e.create("doc", &numbered(10)).await;
    let r = e
        .call(
            "read_artifact",
            &[("id", "doc"), ("offset", "8"), ("limit", "3")],
        )
        .await;
    assert!(
        r.data
            .contains("shown_lines=\"8-10\" has_more=\"false\" truncated_by=\"none\""),
        "{}",
        r.data
    );
    assert!(!r.data.contains("To continue"));
}

#[tokio::test]
async fn an_offset_past_the_end_is_an_empty_success() {
    let e = env();
    e.create("doc", &numbered(3)).await;
    let r = e
        .call("read_artifact", &[("id", "doc"), ("offset", "99")])
        .await;
    assert!(r.success, "{r:?}");
    assert!(
        r.data
            .contains("total_lines=\"3\" shown_lines=\"none\" has_more=\"false\""),
        "{}",
        r.data
    );
    assert!(r.data.ends_with(">\n</artifact_slice>"), "{}", r.data);
}

#[tokio::test]
async fn the_hidden_cap_cuts_at_a_line_boundary_and_sets_has_more() {
    let e = env();
    let line = format!("{}\n", "x".repeat(99)); // 100 chars per line
    let text = line.repeat(1200); // 120,000 chars
    e.create("wide", &text).await;
    let r = e.call("read_artifact", &[("id", "wide")]).await;
    assert!(r.success);
    assert!(
        r.data
            .contains("shown_lines=\"1-500\" has_more=\"true\" truncated_by=\"max_chars\""),
        "{}",
        &r.data[..300]
    );
    assert!(r
        .data
        .ends_with("To continue: read_artifact(id='wide', offset=501)"));
    let body_len = r.data.find("</artifact_slice>").unwrap() - r.data.find(">\n").unwrap() - 2;
    assert_eq!(body_len, 50_000);
    assert_eq!(
        e.tools[3].max_result_size_chars(),
        None,
        "read results are never persisted"
    );
}

#[tokio::test]
async fn a_single_huge_line_is_cut_with_a_note() {
    let e = env();
    e.create("one", &format!("{}\nnext\n", "y".repeat(60_000)))
        .await;
    let r = e.call("read_artifact", &[("id", "one")]).await;
    assert!(
        r.data
            .contains("shown_lines=\"1-1\" has_more=\"true\" truncated_by=\"max_chars\""),
        "{}",
        &r.data[..300]
    );
    assert!(r.data.contains("Line 1 alone is longer"));
    assert!(r.data.ends_with("offset=2)"));
}

#[tokio::test]
async fn past_versions_can_be_read() {
    let e = env();
    e.create("doc", "old\n").await;
    e.call("rewrite_artifact", &[("id", "doc"), ("content", "new\n")])
        .await;
    let r = e
        .call("read_artifact", &[("id", "doc"), ("version", "1")])
        .await;
    assert!(
        r.data.contains("version=\"1\"") && r.data.contains(">\nold\n<"),
        "{}",
        r.data
    );
    let r = e
        .call("read_artifact", &[("id", "doc"), ("version", "7")])
        .await;
    assert!(
        err(&r).contains("has no version 7; its versions are 1 to 2"),
        "{r:?}"
    );
}

#[tokio::test]
async fn unknown_ids_and_bad_offsets_are_errors() {
    let e = env();
    let r = e.call("read_artifact", &[("id", "missing")]).await;
    assert!(err(&r).contains("'missing'"), "{r:?}");
    e.create("doc", "x").await;
    let r = e
        .call("read_artifact", &[("id", "doc"), ("offset", "0")])
        .await;
    assert!(err(&r).contains("1-based"), "{r:?}");
    let r = e
        .call("read_artifact", &[("id", "doc"), ("offset", "two")])
        .await;
    assert!(err(&r).contains("offset"), "{r:?}");
}

#[tokio::test]
async fn the_body_can_be_quoted_back_as_old_str() {
    let e = env();
    e.create("doc", "  indented\ttab \"quotes\" <tags>\n").await;
    let r = e.call("read_artifact", &[("id", "doc")]).await;
    let start = r.data.find(">\n").unwrap() + 2;
    let end = r.data.find("</artifact_slice>").unwrap();
    let body = &r.data[start..end];
    let r = e
        .call(
            "update_artifact",
            &[("id", "doc"), ("old_str", body), ("new_str", "done\n")],
        )
        .await;
    assert_eq!(r.metadata["match"], "exact", "{r:?}");
}

/// The page `read_lines` should return, worked out from the text itself.
fn expected_page(text: &str, offset: usize, limit: usize) -> String {
    text.split_inclusive('\n')
        .skip(offset - 1)
        .take(limit)
        .collect()
}

#[test]
fn pages_are_exact_across_chunk_boundaries() {
    use engine::artifacts::lines::{split_chunks, CHUNK_TARGET_BYTES};
    let e = env();
    // Several chunks, a line longer than a chunk in the middle, and no final newline.
    let mut text: String = (1..=12_000)
        .map(|i| format!("line {i} {}\n", "é".repeat(i % 7)))
        .collect();
    text.push_str(&format!("{}\n", "w".repeat(CHUNK_TARGET_BYTES + 10)));
    text.extend((12_002..=20_000).map(|i| format!("row {i}\n")));
    text.push_str("last line without newline");
    let (total, chunks) = split_chunks(&text, CHUNK_TARGET_BYTES);
    assert!(chunks.len() > 3, "{} chunks", chunks.len());
    e.store
        .create(&engine::artifacts::NewArtifact {
            conversation_id: "c1",
            id: "big",
            title: "big",
            content_type: "text/plain",
            source: engine::artifacts::ArtifactSource::Agent,
            content: &text,
        })
        .unwrap();
    assert_eq!(e.content("big"), text, "chunks join back to the content");
    let mut offsets = vec![1, 2, total - 1, total];
    for c in &chunks {
        offsets.extend([
            c.first_line.saturating_sub(1).max(1),
            c.first_line,
            c.first_line + 1,
        ]);
    }
    for offset in offsets {
        for limit in [1, 3, 500] {
            let page = e
                .store
                .read_lines("c1", "big", None, offset, Some(limit), usize::MAX)
                .unwrap();
            assert_eq!(page.total_lines, total);
            assert_eq!(
                page.text,
                expected_page(&text, offset, limit),
                "offset {offset} limit {limit}"
            );
            assert_eq!(page.lines_shown, limit.min(total + 1 - offset));
            assert_eq!(page.has_more(), offset + limit <= total);
        }
    }
    let past = e
        .store
        .read_lines("c1", "big", None, total + 1, Some(10), usize::MAX)
        .unwrap();
    assert_eq!((past.lines_shown, past.text.as_str()), (0, ""));
    // The character cap still cuts at a line boundary inside a later chunk.
    let page = e
        .store
        .read_lines("c1", "big", None, 11_990, None, 500)
        .unwrap();
    assert!(page.text.chars().count() <= 500 && page.text.ends_with('\n'));
    assert_eq!(page.text, expected_page(&text, 11_990, page.lines_shown));
}

#[test]
fn empty_content_has_no_lines_and_old_versions_keep_their_chunks() {
    let e = env();
    e.store
        .create(&engine::artifacts::NewArtifact {
            conversation_id: "c1",
            id: "e",
            title: "e",
            content_type: "text/plain",
            source: engine::artifacts::ArtifactSource::Agent,
            content: "",
        })
        .unwrap();
    let page = e.store.read_lines("c1", "e", None, 1, None, 100).unwrap();
    assert_eq!((page.total_lines, page.lines_shown), (0, 0));
    assert_eq!(e.content("e"), "");
    let v2 = numbered(30_000);
    e.store.rewrite("c1", "e", &v2).unwrap();
    e.store.rewrite("c1", "e", "third\n").unwrap();
    assert_eq!(e.store.content("c1", "e", Some(1)).unwrap().1, "");
    assert_eq!(e.store.content("c1", "e", Some(2)).unwrap().1, v2);
    let page = e
        .store
        .read_lines("c1", "e", Some(2), 29_999, Some(5), usize::MAX)
        .unwrap();
    assert_eq!(page.text, "line 29999\nline 30000\n");
    let versions = e.store.versions("c1", "e").unwrap();
    assert_eq!(versions[1].line_count, 30_000);
}
