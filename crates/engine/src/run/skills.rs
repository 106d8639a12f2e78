//! The skills an agent may load, as its prompt lists them: each skill's name and description
//! only (progressive disclosure: the instructions come when the model calls `load_skill`).
//!
//! Budgets, counted with the context budget's own estimate: at most
//! [`PER_SKILL_TOKENS`] per skill (a longer description is cut at a word), and
//! [`LISTING_TOKENS`] for the whole listing (past it, the other skills are named without
//! their descriptions, so every skill stays reachable).

use super::budget::estimate_text;

/// The most tokens one skill's line costs.
pub const PER_SKILL_TOKENS: u32 = 100;
/// The most tokens the listing's lines cost together before the rest are named only.
pub const LISTING_TOKENS: u32 = 4_000;

const HEADER: &str = "## Skills\n\
You have skills: instructions and files for particular kinds of task. When a task matches a \
skill's description, call `load_skill` with its name before you start, then follow what it \
says (it may point to files: read them with `read_skill_file`, run its scripts with \
`run_skill_script`). Load a skill only when you need it.";

/// One skill's line (its name and one-line description), cut to [`PER_SKILL_TOKENS`].
pub fn line(name: &str, description: &str) -> String {
    let mut line = format!("- {name}: {description}");
    if estimate_text(&line) <= PER_SKILL_TOKENS {
        return line;
    }
    let mut words: Vec<&str> = line.split(' ').collect();
    loop {
        words.pop();
        let cut = format!("{} …", words.join(" "));
        if estimate_text(&cut) <= PER_SKILL_TOKENS || words.len() <= 2 {
            line = cut;
            break;
        }
    }
    line
}

/// The listing for `skills`, each a name and a one-line description (empty when there are
/// none).
pub fn listing(skills: &[(String, String)]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut text = HEADER.to_string();
    let mut spent = 0;
    let mut unlisted = Vec::new();
    for (name, description) in skills {
        let line = line(name, description);
        let cost = estimate_text(&line);
        if unlisted.is_empty() && spent + cost <= LISTING_TOKENS {
            spent += cost;
            text.push('\n');
            text.push_str(&line);
        } else {
            unlisted.push(name.as_str());
        }
    }
    if !unlisted.is_empty() {
        text.push_str(&format!(
            "\n- and these, whose descriptions `load_skill` shows: {}",
            unlisted.join(", ")
        ));
    }
    text
}

/// `role_prompt` with the listing of `skills` after it.
pub fn with_listing(role_prompt: &str, skills: &[(String, String)]) -> String {
    let listing = listing(skills);
    if listing.is_empty() {
        role_prompt.to_string()
    } else {
        format!("{role_prompt}\n\n{listing}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(name: &str, description: &str) -> (String, String) {
        let s = crate::skills::parse_skill(
            std::path::Path::new("SKILL.md"),
            &format!("---\nname: {name}\ndescription: {description:?}\n---\nDo it.\n"),
        )
        .unwrap();
        (s.name.clone(), s.one_line_description())
    }

    #[test]
    fn each_skill_costs_at_most_its_budget_and_keeps_its_name() {
        let short = skill("pdf", "Fill PDF forms.");
        let long = skill("long", &"word ".repeat(200));
        assert_eq!(line(&short.0, &short.1), "- pdf: Fill PDF forms.");
        let cut = line(&long.0, &long.1);
        assert!(estimate_text(&cut) <= PER_SKILL_TOKENS, "{cut}");
        assert!(
            cut.starts_with("- long: word word") && cut.ends_with('…'),
            "{cut}"
        );
        let text = listing(&[short, long]);
        assert!(text.contains("`load_skill`"));
        assert!(
            !text.contains("Do it."),
            "only descriptions, never instructions"
        );
    }

    #[test]
    fn past_the_total_budget_the_rest_are_named() {
        let many: Vec<(String, String)> = (0..60)
            .map(|i| skill(&format!("s{i:02}"), &"long description ".repeat(20)))
            .collect();
        let text = listing(&many);
        let lines_cost: u32 = text.lines().skip(2).map(estimate_text).sum();
        assert!(lines_cost <= LISTING_TOKENS + estimate_text(text.lines().last().unwrap()));
        assert!(text.contains("and these, whose descriptions"), "{text}");
        assert!(text.contains("s59"), "every skill stays reachable");
    }
}
