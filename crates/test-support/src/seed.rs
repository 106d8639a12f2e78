//! A year of use in a database: conversations with messages, for the tests and the benchmark
//! of the conversation list (`seed-conversations`). Written through the engine's own
//! functions, so the rows (and the full-text index its triggers keep) are what the app writes.

use engine::conversations::{add_message, ensure, NewMessage};

/// Words the seeded messages are made of.
const WORDS: &[&str] = &[
    "report",
    "draft",
    "summary",
    "budget",
    "research",
    "market",
    "weather",
    "recipe",
    "travel",
    "python",
    "rust",
    "garden",
    "invoice",
    "meeting",
    "notes",
    "review",
    "outline",
    "poem",
    "essay",
    "plan",
    "schedule",
    "analysis",
    "letter",
    "translation",
    "question",
    "answer",
    "database",
    "network",
    "history",
    "science",
    "music",
    "design",
    "chapter",
    "customer",
];

/// The word of conversation `i` that no other conversation has: `ticket 00042`.
pub fn ticket(i: usize) -> String {
    format!("ticket {i:05}")
}

/// The title of seeded conversation `i`.
pub fn title(i: usize) -> String {
    let w = |k: usize| WORDS[(i * 7 + k * 13) % WORDS.len()];
    format!("{} {} {} #{i}", w(0), w(1), w(2))
}

/// Add `count` conversations (`seed-00000`, …) of `messages` messages each, in one
/// transaction. Conversation `i` was last changed `i * 105` minutes ago (5,000 of them span
/// about a year, newest first), and one of its middle messages holds [`ticket`]`(i)`.
pub fn seed(conn: &rusqlite::Connection, count: usize, messages: usize) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    for i in 0..count {
        let id = format!("seed-{i:05}");
        ensure(&tx, &id, &title(i))?;
        for m in 0..messages {
            let mut content: String = (0..40)
                .map(|k| WORDS[(i * 31 + m * 17 + k * 7) % WORDS.len()])
                .collect::<Vec<_>>()
                .join(" ");
            if m == messages / 2 {
                content.push_str(&format!(" (see {})", ticket(i)));
            }
            add_message(
                &tx,
                &NewMessage {
                    conversation_id: &id,
                    run_id: "seed",
                    role: if m % 2 == 0 { "user" } else { "assistant" },
                    agent: "lead_agent",
                    content: &content,
                    depth: 0,
                    usage: None,
                },
            )?;
        }
        let minutes = format!("-{} minutes", i * 105);
        tx.execute(
            "UPDATE conversations SET agent = 'lead_agent',
                updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2),
                created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?2) WHERE id = ?1",
            [&id, &minutes],
        )?;
    }
    tx.commit()
}
