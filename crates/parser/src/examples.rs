//! The values the `<tool_instructions>` examples give parameters: plausible real values, never
//! placeholders.
//!
//! Small models copy an example's values: shown `your_id_here`, SmolLM2-135M created an
//! artifact of that id. So each value is one a person could really have written, drawn from
//! what the tool says about the parameter, first match wins:
//!
//! 1. its default, else its first allowed value (a required parameter; an optional one is shown
//!    only with a default and no list of allowed values);
//! 2. the first of the `examples` its JSON Schema gives (an MCP tool's `inputSchema`);
//! 3. the example its description gives (`e.g. 'report'`, `for example scripts/convert.py`);
//! 4. its schema's `format` (`date`, `email`, `uri`, …);
//! 5. its name: `id` → `quarterly-report`, `title` → `Quarterly report`, `url` →
//!    `https://example.com/report`, `count` → 6, `latitude` → 41.1579, … (one theme, a
//!    quarterly report, so the values of one call, and the artifact tools' examples one after
//!    another, fit together);
//! 6. what its description says it is (`YYYY-MM-DD`, `HH:MM`, an email address, a URL, a path);
//! 7. its type: `quarterly report`, 6, 2.5, `true`.
//!
//! A number is then brought within the bounds its schema or description gives (`(1-50)`,
//! `at most 600`, `between 1 and 7`), a text within its lengths. A parameter given as JSON text
//! (an MCP object or array) gets a JSON value built the same way from its schema: an object
//! with its required members, an array with one element. A value that looks like a placeholder
//! (see [`looks_like_placeholder`]) is never taken from a description, default or schema
//! example; only a list of allowed values that holds nothing else can force one.
//!
//! The values are chosen once, here, not from anything a person wrote in a conversation, and
//! none is a value the tool-use check's items ask for (the engine's tests hold it to that): a
//! model that copies an example does not pass for one that understood the request.

use artifactflow_ground::tool_spec::{ParamSpec, ParamType, ToolSpec};
use serde_json::{Map, Value};

/// The theme's identifier, for ids, keys and names.
const ID: &str = "quarterly-report";
/// The theme's title.
const TITLE: &str = "Quarterly report";
/// A text on the theme, for contents, bodies and messages.
const TEXT: &str = "Sales rose 4% in the second quarter.";
/// A text of any other kind.
const PHRASE: &str = "quarterly report";
/// A whole number that counts something.
const COUNT: i64 = 6;
/// A number of any other kind.
const NUMBER: f64 = 2.5;
/// How deep a JSON example goes into nested objects and arrays.
const MAX_DEPTH: usize = 6;

/// Does `text` look like a placeholder rather than a real value: `your_…`, `…_here`,
/// `<something>`, `placeholder` or `example_value` (in any case)?
pub(crate) fn looks_like_placeholder(text: &str) -> bool {
    let lower = text.to_lowercase();
    let angled = lower
        .find('<')
        .is_some_and(|open| lower[open + 1..].contains('>'));
    angled
        || ["your_", "_here", "placeholder", "example_value"]
            .iter()
            .any(|marker| lower.contains(marker))
}

/// The value the example of `tool`'s call gives `param`, or `None` to leave it out.
pub(crate) fn example_value(tool: &ToolSpec, param: &ParamSpec) -> Option<String> {
    let allowed = param.enum_values.as_ref().filter(|v| !v.is_empty());
    let default = param
        .default
        .as_ref()
        .and_then(default_text)
        .filter(|d| !looks_like_placeholder(d))
        .filter(|d| allowed.is_none_or(|values| values.contains(d)));
    if !param.required {
        return if allowed.is_none() { default } else { None };
    }
    if let Some(default) = default {
        return Some(default);
    }
    if let Some(values) = allowed {
        let real = values.iter().find(|v| !looks_like_placeholder(v));
        return Some(real.unwrap_or(&values[0]).clone());
    }
    let schema = property_schema(tool, &param.name);
    let about = About::new(&param.name, &param.description, schema);
    if let Some(schema) = schema.filter(|s| is_json_text(s)) {
        return Some(json_value(schema, &about, root_schema(tool), 0).to_string());
    }
    if param.kind == ParamType::String && param.description.contains("give a JSON") {
        // An MCP object or array whose schema was too large to keep.
        let shape = if param.description.contains("JSON array") {
            "[]"
        } else {
            "{}"
        };
        return Some(shape.into());
    }
    Some(match param.kind {
        ParamType::String => text_value(&about),
        ParamType::Integer => integer_value(&about).to_string(),
        ParamType::Number => number_text(number_value(&about)),
        ParamType::Boolean => "true".into(),
    })
}

/// A default as the example writes it (`None` for `null`).
pub(crate) fn default_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// What is known of a value to choose: its name's words, its description, its schema.
struct About<'a> {
    words: Vec<String>,
    description: String,
    schema: Option<&'a Value>,
}

impl<'a> About<'a> {
    fn new(name: &str, description: &str, schema: Option<&'a Value>) -> Self {
        let description = if description.trim().is_empty() {
            schema
                .and_then(|s| s.get("description"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        } else {
            description.to_string()
        };
        About {
            words: name_words(name),
            description,
            schema,
        }
    }

    /// Does the name have one of these words?
    fn named(&self, words: &[&str]) -> bool {
        self.words.iter().any(|w| words.contains(&w.as_str()))
    }

    /// Does the description mention one of these (lower case)?
    fn says(&self, phrases: &[&str]) -> bool {
        let lower = self.description.to_lowercase();
        phrases.iter().any(|p| lower.contains(p))
    }

    fn schema_str(&self, key: &str) -> Option<&str> {
        self.schema?.get(key)?.as_str()
    }

    fn schema_f64(&self, key: &str) -> Option<f64> {
        self.schema?.get(key)?.as_f64()
    }

    /// The first of the schema's `examples` (or its `example`) that is not a placeholder.
    fn schema_example(&self) -> Option<&Value> {
        let schema = self.schema?;
        let listed = schema.get("examples").and_then(Value::as_array);
        listed
            .into_iter()
            .flatten()
            .chain(schema.get("example"))
            .find(|v| !looks_like_placeholder(&default_text(v).unwrap_or_default()))
    }

    /// The lowest and highest value the schema or the description allows; an exclusive
    /// bound moves in by `step` (1 for whole numbers, a hair for others).
    fn bounds(&self, step: f64) -> (Option<f64>, Option<f64>) {
        let (mut low, mut high) = described_bounds(&self.description);
        let nudge = |bound: f64| step.max(bound.abs() * 1e-9);
        if let Some(min) = self.schema_f64("minimum") {
            low = Some(min);
        }
        if let Some(min) = self.schema_f64("exclusiveMinimum") {
            low = Some(min + nudge(min));
        }
        if let Some(max) = self.schema_f64("maximum") {
            high = Some(max);
        }
        if let Some(max) = self.schema_f64("exclusiveMaximum") {
            high = Some(max - nudge(max));
        }
        (low, high)
    }
}

/// A name's words in lower case: `max_results` → max, results; `fromUnit` → from, unit.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            previous_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Words a description's example may not be (`e.g. the city's name` gives no example).
const NOT_AN_EXAMPLE: [&str; 9] = [
    "a", "an", "the", "your", "my", "this", "that", "one", "some",
];

/// The first example a description gives: `e.g. 'report'`, `e.g. references/guide.md`,
/// `for example 10`.
fn described_example(description: &str) -> Option<String> {
    let lower = description.to_lowercase();
    let at = ["e.g.", "eg.", "for example", "for instance"]
        .iter()
        .filter_map(|cue| lower.find(cue).map(|at| at + cue.len()))
        .min()?;
    let rest = description[at..].trim_start_matches([' ', ',', ':']);
    let value = match rest.chars().next()? {
        quote @ ('\'' | '"' | '`') => rest[1..].split(quote).next()?,
        _ => rest
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';' || c == ')')
            .next()?
            .trim_end_matches(['.', ':']),
    };
    let value = value.trim();
    let usable = !value.is_empty()
        && !NOT_AN_EXAMPLE.contains(&value.to_lowercase().as_str())
        && !looks_like_placeholder(value);
    usable.then(|| value.to_string())
}

/// The bounds a description gives: `(1-50)`, `1 to 7`, `between 1 and 10`, `at most 600`,
/// `at least 2`, `min 1`, `max 50`, `up to 20`.
fn described_bounds(description: &str) -> (Option<f64>, Option<f64>) {
    let lower = description.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || "(),;:".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: Option<&&str>| w.and_then(|w| w.trim_end_matches('.').parse::<f64>().ok());
    let (mut low, mut high) = (None, None);
    for (i, word) in words.iter().enumerate() {
        let next = number(words.get(i + 1));
        match *word {
            "most" | "max" | "maximum" | "under" => high = next.or(high),
            "least" | "min" | "minimum" => low = next.or(low),
            "to" if i > 0 && words[i - 1] == "up" => high = next.or(high),
            "to" | "and" if i > 0 => {
                let before = number(words.get(i - 1));
                let between = *word == "to" || i > 1 && words[i - 2] == "between";
                if let (Some(a), Some(b), true) = (before, next, between) {
                    if a <= b {
                        (low, high) = (Some(a), Some(b));
                    }
                }
            }
            range => {
                if let Some((a, b)) = dashed_range(range) {
                    (low, high) = (Some(a), Some(b));
                }
            }
        }
    }
    (low, high)
}

/// `A-B` (`1-50`, `-20--5`) with A at most B.
fn dashed_range(word: &str) -> Option<(f64, f64)> {
    let bytes = word.as_bytes();
    (1..bytes.len())
        .filter(|&i| bytes[i] == b'-' && bytes[i - 1].is_ascii_digit())
        .find_map(|i| {
            let a = word[..i].parse::<f64>().ok()?;
            let b = word[i + 1..].trim_end_matches('.').parse::<f64>().ok()?;
            (a <= b).then_some((a, b))
        })
}

/// A text for a string parameter (see the module docs for the order).
fn text_value(about: &About<'_>) -> String {
    let chosen = about
        .schema_example()
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| described_example(&about.description))
        .or_else(|| formatted_text(about).map(str::to_string))
        .unwrap_or_else(|| named_text(about).to_string());
    fit_length(chosen, about)
}

/// A text of the kind the schema's `format` names.
fn formatted_text(about: &About<'_>) -> Option<&'static str> {
    let by_format = match about.schema_str("format")? {
        "date" => "2026-05-18",
        "date-time" => "2026-05-18T16:45:00Z",
        "time" => "16:45:00",
        "email" | "idn-email" => "kim@example.com",
        "uri" | "url" | "iri" | "uri-reference" | "iri-reference" => "https://example.com/report",
        "hostname" | "idn-hostname" => "example.com",
        "ipv4" => "192.0.2.10",
        "ipv6" => "2001:db8::10",
        "uuid" => "3f2b8c1e-5d4a-4e6f-9b7c-1a2d3e4f5a6b",
        "duration" => "PT30M",
        _ => return None,
    };
    Some(by_format)
}

/// A text chosen by the parameter's name, then by what its description says it is.
fn named_text(about: &About<'_>) -> &'static str {
    let named = |words: &[&str]| about.named(words);
    let said = |phrases: &[&str]| about.says(phrases);
    // What the name says the value is, then the name's other words (the most particular
    // first), then what the description says it is.
    let kind = if named(&["datetime", "timestamp"]) {
        Some(DATE_TIME)
    } else if named(&["date", "day", "birthday", "due"]) {
        Some(DATE)
    } else if named(&["time", "clock"]) {
        Some(TIME)
    } else if named(&["email", "mail", "recipient"]) {
        Some(EMAIL)
    } else if named(&[
        "url", "uri", "link", "href", "endpoint", "website", "homepage",
    ]) {
        Some(URL)
    } else if named(&["file"]) && named(&["name"]) {
        Some(FILE_NAME)
    } else {
        None
    };
    if let Some(kind) = kind {
        return kind;
    }
    if let Some((_, value)) = BY_NAME.iter().find(|(words, _)| named(words)) {
        return value;
    }
    if said(&[
        "yyyy-mm-ddthh",
        "iso 8601",
        "date-time",
        "datetime",
        "timestamp",
    ]) {
        DATE_TIME
    } else if said(&["yyyy-mm-dd", "iso date", "format date"]) {
        DATE
    } else if said(&["hh:mm:ss"]) {
        "16:45:00"
    } else if said(&["hh:mm"]) {
        TIME
    } else if said(&["email", "e-mail"]) {
        EMAIL
    } else if said(&["url", "http://", "https://", "web address", "format uri"]) {
        URL
    } else if said(&["path", "file"]) {
        PATH
    } else {
        PHRASE
    }
}

const DATE_TIME: &str = "2026-05-18T16:45:00Z";
const DATE: &str = "2026-05-18";
const TIME: &str = "16:45";
const EMAIL: &str = "kim@example.com";
const URL: &str = "https://example.com/report";
const FILE_NAME: &str = "quarterly-report.md";
const PATH: &str = "docs/quarterly-report.md";

/// Texts by a word of the parameter's name, the most particular words first (`user_id` is a
/// user, `city_name` a city, `new_title` a title).
const BY_NAME: [(&[&str], &str); 37] = [
    (&["agent"], "researcher"),
    (&["skill"], "pdf-forms"),
    (&["repo", "repository"], "octocat/spoon-knife"),
    (&["branch"], "main"),
    (&["filename"], FILE_NAME),
    (&["script"], "scripts/convert.py"),
    (&["path", "file"], PATH),
    (&["dir", "directory", "folder"], "docs"),
    (&["glob"], "*.md"),
    (&["pattern", "regex", "regexp"], "quarter"),
    (
        &["title", "subject", "heading", "headline", "caption"],
        TITLE,
    ),
    (
        &[
            "first", "last", "full", "person", "author", "assignee", "owner",
        ],
        "Kim Lee",
    ),
    (&["user", "username", "login", "handle"], "kimlee"),
    (
        &["summary", "description", "abstract"],
        "A one-page summary of the quarter's sales.",
    ),
    (
        &[
            "instruction",
            "instructions",
            "task",
            "prompt",
            "goal",
            "request",
        ],
        "Summarise the quarterly report in three bullet points.",
    ),
    (
        &[
            "query", "q", "search", "keywords", "keyword", "term", "terms", "question",
        ],
        "quarterly sales figures",
    ),
    (&["ip"], "192.0.2.10"),
    (&["host", "hostname", "domain"], "example.com"),
    (
        &[
            "city",
            "town",
            "location",
            "place",
            "destination",
            "origin",
            "address",
        ],
        "Porto",
    ),
    (&["country"], "Portugal"),
    (&["timezone", "tz", "zone"], "Europe/Berlin"),
    (&["language", "lang", "locale"], "en"),
    (&["currency"], "EUR"),
    (&["color", "colour"], "#1e90ff"),
    (&["phone", "mobile", "tel"], "+1 555 0100"),
    (
        &[
            "tag",
            "tags",
            "label",
            "labels",
            "category",
            "categories",
            "topic",
        ],
        "finance",
    ),
    (&["unit", "units"], "cm"),
    (&["version"], "1.2.0"),
    (&["status", "state"], "open"),
    (&["args", "arguments", "flags", "options"], "--verbose"),
    (&["command", "cmd", "shell"], "ls -la"),
    (&["code", "source", "snippet"], "print(2 + 2)"),
    (&["expression", "formula"], "2 + 2"),
    (&["old"], "second quarter"),
    (&["new", "replacement", "replace"], "third quarter"),
    (
        &[
            "content", "contents", "text", "body", "message", "markdown", "note", "notes",
            "comment", "reply", "answer", "html", "input",
        ],
        TEXT,
    ),
    (&["id", "key", "slug", "identifier", "ref", "name"], ID),
];

/// A text cut to the schema's `maxLength` and repeated up to its `minLength`.
fn fit_length(text: String, about: &About<'_>) -> String {
    let chars = text.chars().count() as f64;
    if let Some(max) = about.schema_f64("maxLength").filter(|max| chars > *max) {
        return text.chars().take(max.max(0.0) as usize).collect();
    }
    if let Some(min) = about.schema_f64("minLength").filter(|min| chars < *min) {
        let repeated: String = text.chars().cycle().take(min as usize).collect();
        return repeated;
    }
    text
}

/// A whole number for an integer parameter, within its bounds.
fn integer_value(about: &About<'_>) -> i64 {
    let given = about
        .schema_example()
        .and_then(Value::as_i64)
        .or_else(|| described_example(&about.description).and_then(|e| e.parse().ok()));
    let chosen = given.unwrap_or_else(|| named_integer(about));
    let (low, high) = about.bounds(1.0);
    let mut value = chosen as f64;
    if let Some(high) = high {
        value = value.min(high.floor());
    }
    if let Some(low) = low {
        value = value.max(low.ceil());
    }
    value as i64
}

/// A whole number by a word of the parameter's name, else one that counts something.
fn named_integer(about: &About<'_>) -> i64 {
    let by_name: [(&[&str], i64); 12] = [
        (&["year"], 2026),
        (&["month"], 5),
        (&["hour"], 16),
        (&["minute", "minutes", "duration"], 25),
        (
            &[
                "second", "seconds", "secs", "timeout", "delay", "interval", "wait",
            ],
            30,
        ),
        (&["port"], 8080),
        (&["width"], 800),
        (&["height"], 600),
        (
            &[
                "page", "offset", "line", "start", "index", "position", "from", "first",
            ],
            1,
        ),
        (&["version", "revision"], 2),
        (&["id", "number", "issue", "pr"], 42),
        (&["day"], 18),
    ];
    by_name
        .iter()
        .find(|(words, _)| about.named(words))
        .map_or(COUNT, |(_, value)| *value)
}

/// A number for a number parameter, within its bounds.
fn number_value(about: &About<'_>) -> f64 {
    let given = about
        .schema_example()
        .and_then(Value::as_f64)
        .or_else(|| described_example(&about.description).and_then(|e| e.parse().ok()))
        .filter(|v: &f64| v.is_finite());
    let by_name: [(&[&str], f64); 7] = [
        (&["latitude", "lat"], 41.1579),
        (&["longitude", "lon", "lng", "long"], -8.6291),
        (&["temperature"], 0.7),
        (
            &[
                "ratio",
                "weight",
                "probability",
                "score",
                "threshold",
                "confidence",
            ],
            0.5,
        ),
        (&["price", "cost", "amount", "total"], 19.99),
        (&["percent", "percentage"], 25.0),
        (&["quantity", "value"], 12.5),
    ];
    let chosen = given.unwrap_or_else(|| {
        by_name
            .iter()
            .find(|(words, _)| about.named(words))
            .map_or(NUMBER, |(_, value)| *value)
    });
    let (low, high) = about.bounds(1e-9);
    within(chosen, low, high)
}

/// `value`, or the nearest whole number within the bounds when it is outside them (a
/// fractional bound written out and read back may move by its last digit), or their middle
/// when no whole number lies between them.
fn within(value: f64, low: Option<f64>, high: Option<f64>) -> f64 {
    let above = |v: f64| low.is_none_or(|low| v >= low);
    let below = |v: f64| high.is_none_or(|high| v <= high);
    if above(value) && below(value) {
        return value;
    }
    let whole = match (low, high) {
        (_, Some(high)) if value > high => high.floor(),
        (Some(low), _) => low.ceil(),
        _ => value,
    };
    match (low, high) {
        _ if above(whole) && below(whole) => whole,
        (Some(low), Some(high)) => {
            // The shortest decimal near their middle that lies strictly between them.
            let middle = low + (high - low) / 2.0;
            (1..=6)
                .map(|digits| {
                    let scale = 10f64.powi(digits);
                    (middle * scale).round() / scale
                })
                .find(|v| *v > low && *v < high)
                .unwrap_or(middle)
        }
        _ => whole,
    }
}

/// A number as the example writes it: whole numbers with `.0`, so it reads as a number.
fn number_text(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.1}")
    } else {
        value.to_string()
    }
}

/// The property schema of `name` in `tool`'s own JSON Schema, if it has one.
fn property_schema<'a>(tool: &'a ToolSpec, name: &str) -> Option<&'a Value> {
    tool.input_schema.as_ref()?.get("properties")?.get(name)
}

/// `tool`'s own JSON Schema, where its `$ref`s resolve (`null` when it has none).
fn root_schema(tool: &ToolSpec) -> &Value {
    tool.input_schema.as_ref().unwrap_or(&Value::Null)
}

/// The simple type of a property schema (`["string","null"]` counts as `string`; an `enum`
/// alone as a string), as the MCP reader decides which parameters travel as JSON text.
fn simple_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(types)) => {
            let non_null: Vec<&str> = types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (non_null.len() == 1).then(|| non_null[0])
        }
        None if schema.get("enum").is_some() => Some("string"),
        _ => None,
    }
}

/// Is a parameter of this schema given as JSON text (an object, an array, a composition)?
fn is_json_text(schema: &Value) -> bool {
    !matches!(
        simple_type(schema),
        Some("string" | "integer" | "number" | "boolean")
    )
}

/// A local `$ref` (`#/$defs/x`, `#/definitions/x`) followed within `root`.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..MAX_DEPTH {
        let Some(pointer) = current.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match pointer.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

/// A JSON value that `schema` accepts, chosen by the same rules as a parameter's.
fn json_value(schema: &Value, about: &About<'_>, root: &Value, depth: usize) -> Value {
    let schema = resolve(schema, root);
    let about = About {
        words: about.words.clone(),
        description: schema
            .get("description")
            .and_then(Value::as_str)
            .map_or_else(|| about.description.clone(), str::to_string),
        schema: Some(schema),
    };
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let real = values.iter().find(|v| !looks_like_text_placeholder(v));
        if let Some(value) = real.or(values.first()) {
            return value.clone();
        }
    }
    if let Some(value) = schema
        .get("default")
        .filter(|d| !looks_like_text_placeholder(d))
    {
        return value.clone();
    }
    if let Some(value) = about.schema_example() {
        return value.clone();
    }
    if depth >= MAX_DEPTH {
        // Deep enough (or a cycle of `$ref`s): the plainest value of the type.
        return match simple_type(schema) {
            Some("object") => Value::Object(Map::new()),
            Some("array") => Value::Array(Vec::new()),
            Some("integer" | "number") => Value::from(COUNT),
            Some("boolean") => Value::Bool(true),
            Some("null") => Value::Null,
            _ => Value::String(PHRASE.into()),
        };
    }
    for composition in ["anyOf", "oneOf", "allOf"] {
        let first = schema
            .get(composition)
            .and_then(Value::as_array)
            .and_then(|options| {
                options
                    .iter()
                    .find(|o| simple_type(resolve(o, root)) != Some("null"))
            });
        if let Some(option) = first {
            return json_value(option, &about, root, depth + 1);
        }
    }
    match simple_type(schema) {
        Some("string") => Value::String(text_value(&about)),
        Some("integer") => Value::from(integer_value(&about)),
        Some("number") => serde_json::Number::from_f64(number_value(&about))
            .map_or(Value::from(COUNT), Value::Number),
        Some("boolean") => Value::Bool(true),
        Some("null") => Value::Null,
        Some("array") => {
            let fewest = about.schema_f64("minItems").unwrap_or(1.0).max(1.0);
            let most = about.schema_f64("maxItems").unwrap_or(fewest);
            let count = fewest.min(most).max(0.0) as usize;
            if count == 0 {
                return Value::Array(Vec::new());
            }
            let items = schema.get("items").unwrap_or(&Value::Null);
            let item = if items.is_object() {
                json_value(items, &about, root, depth + 1)
            } else {
                Value::String(named_text(&about).into())
            };
            Value::Array(vec![item; count])
        }
        Some("object") => Value::Object(object_value(schema, root, depth)),
        // No type: any value; a text is the plainest.
        _ if schema.get("properties").is_some() => Value::Object(object_value(schema, root, depth)),
        _ => Value::String(named_text(&about).into()),
    }
}

/// An object with the required members of `schema`, each chosen by its own name.
fn object_value(schema: &Value, root: &Value, depth: usize) -> Map<String, Value> {
    let mut object = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let member = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        let about = About::new(name, "", Some(member));
        object.insert(
            name.to_string(),
            json_value(member, &about, root, depth + 1),
        );
    }
    object
}

/// Is `value` a text that looks like a placeholder?
fn looks_like_text_placeholder(value: &Value) -> bool {
    value.as_str().is_some_and(looks_like_placeholder)
}
