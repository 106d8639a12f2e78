//! Permission rules see what a call will really do: a deny is not sidestepped by rewriting an
//! argument into another spelling of the same thing (a URL, an e-mail address, a host name, JSON
//! text). Tables of rewritings, every one denied; and `web_fetch` called with `--yes`'s answer
//! through the real gate never reaches the reader stand-in for any of them.

use engine::api::direct;
use engine::calls::CallStatus;
use engine::context::AppContext;
use engine::events::discard;
use engine::permissions::rules::{CallFacts, Destination, Rule, RuleAction, RuleOrigin, RuleSpec};
use engine::permissions::Answer;
use serde_json::Value;

use crate::http_tool::params;
use crate::servers;

fn rule(tool: &str, key: &str, pattern: &str, action: RuleAction) -> Rule {
    Rule::new(
        RuleSpec {
            tool: tool.into(),
            when: [(key.to_string(), pattern.to_string())]
                .into_iter()
                .collect(),
            action,
        },
        RuleOrigin::Global {
            file: "settings.yaml".into(),
            line: 1,
        },
    )
    .unwrap()
}

fn matches(rule: &Rule, tool: &str, name: &str, value: &str) -> bool {
    let p: engine::tools::Params = [(name.to_string(), Value::String(value.to_string()))]
        .into_iter()
        .collect();
    rule.matches(&CallFacts {
        tool,
        params: &p,
        destination: None,
    })
}

/// Spellings of pages on https://intranet.example.com, each reaching it (or not a URL the
/// request could be made with: fail closed).
const URLS: &[&str] = &[
    "https://intranet.example.com/x",
    "https://INTRANET.EXAMPLE.COM/x",
    "https://Intranet.Example.Com/x",
    "HTTPS://intranet.example.com/x",
    "https://intranet.example.com./x",
    "https://INTRANET.example.com./x",
    "https://user@intranet.example.com/x",
    "https://user:pw@intranet.example.com/x",
    "https://@intranet.example.com/x",
    "https://intranet.example.com:443/x",
    "https://intranet.example.com:0443/x",
    "https://intranet.example.com.:443/x",
    "https:\\\\intranet.example.com\\x",
    "https://intranet.example.com\\x",
    " https://intranet.example.com/x",
    "\nhttps://intranet.example.com/x",
    "https://intranet.example.com/x ",
    "https://intra\tnet.example.com/x",
    "https://intra\nnet.example.com/x",
    "ht\ttps://intranet.example.com/x",
    "https://ｉｎｔｒａｎｅｔ.example.com/x",
    "https://ＩＮＴＲＡＮＥＴ．ＥＸＡＭＰＬＥ．ＣＯＭ/x",
    "https://intranet。example。com/x",
    "https://intra\u{AD}net.example.com/x",
    "https://\u{2170}ntranet.example.com/x",
    "https://%69ntranet.example.com/x",
    "https:intranet.example.com/x",
    "https:/intranet.example.com/x",
    "https:///intranet.example.com/x",
    "https://intranet.example.com",
    "https://intranet.example.com?q=1",
    "https://intranet.example.com#top",
    "https://intranet.example.com/a/../x",
    "https://intranet.example.com/./x",
    "https://intranet.example.com/%2e%2e/x",
    "https://user:pw@INTRANET.example.com.:443\\a\\..\\x",
    "https://intranet.example.com:99999/x",
];

#[test]
fn url_rewritings_are_all_denied() {
    assert!(URLS.len() >= 30);
    let deny = rule(
        "web_fetch",
        "url",
        "https://intranet.example.com/**",
        RuleAction::Deny,
    );
    for url in URLS {
        assert!(
            matches(&deny, "web_fetch", "url", url),
            "not denied: {url:?}"
        );
    }
    // A URL pattern's scheme and host are compared in canonical (lower) case too.
    let upper = rule(
        "web_fetch",
        "url",
        "HTTPS://Intranet.Example.com/**",
        RuleAction::Deny,
    );
    for url in URLS {
        assert!(
            matches(&upper, "web_fetch", "url", url),
            "not denied: {url:?}"
        );
    }
    // An allow rule never covers them: it must match the canonical form, and one that cannot
    // be worked out is never allowed.
    let allow = rule(
        "web_fetch",
        "url",
        "https://docs.example.org/**",
        RuleAction::Allow,
    );
    for url in URLS {
        assert!(
            !matches(&allow, "web_fetch", "url", url),
            "allowed: {url:?}"
        );
    }
    for other in [
        "https://docs.example.org/x",
        "https://DOCS.example.org./x",
        "https://docs.example.org",
    ] {
        assert!(!matches(&deny, "web_fetch", "url", other), "{other:?}");
        assert!(matches(&allow, "web_fetch", "url", other), "{other:?}");
    }
    // Tricks that look like the allowed site but go elsewhere are not allowed.
    for trick in [
        "https://docs.example.org@intranet.example.com/x",
        "https://docs.example.org:443@intranet.example.com/",
        "https://docs.example.org.intranet.example.com/x",
    ] {
        assert!(!matches(&allow, "web_fetch", "url", trick), "{trick:?}");
    }
}

#[test]
fn destination_rewritings_are_all_denied_by_host_and_url() {
    let by_host = rule("*", "$host", "intranet.example.com", RuleAction::Deny);
    let by_url = rule(
        "*",
        "$url",
        "https://intranet.example.com/**",
        RuleAction::Deny,
    );
    let p = engine::tools::Params::new();
    let mut reached = 0;
    for url in URLS {
        // The destination an HTTP tool resolves (none: the request could not be made).
        let Some(dest) = engine::tools::http::destination("GET", url.to_string()) else {
            continue;
        };
        reached += 1;
        let facts = CallFacts {
            tool: "api",
            params: &p,
            destination: Some(&dest),
        };
        assert!(
            by_host.matches(&facts),
            "host not denied: {url:?} → {dest:?}"
        );
        assert!(by_url.matches(&facts), "url not denied: {url:?} → {dest:?}");
    }
    assert!(reached >= 30, "{reached}");
    // A destination given as written (not through `destination`) is canonicalised too.
    for host in ["INTRANET.example.com.", "ｉｎｔｒａｎｅｔ.example.com"] {
        let dest = Destination {
            method: "GET".into(),
            url: format!("https://{host}:443/x"),
            host: host.into(),
        };
        let facts = CallFacts {
            tool: "api",
            params: &p,
            destination: Some(&dest),
        };
        assert!(by_host.matches(&facts) && by_url.matches(&facts), "{host}");
    }
}

/// Host names as a parameter (`host: intranet.example.com`).
const HOSTS: &[&str] = &[
    "intranet.example.com",
    "INTRANET.EXAMPLE.COM",
    "Intranet.Example.Com",
    "intranet.example.COM",
    "INTRANET.example.com",
    "intranet.EXAMPLE.com",
    "iNtRaNeT.eXaMpLe.CoM",
    "intranet.example.com.",
    "INTRANET.EXAMPLE.COM.",
    " intranet.example.com",
    "intranet.example.com ",
    "\tintranet.example.com\n",
    "ｉｎｔｒａｎｅｔ.example.com",
    "ＩＮＴＲＡＮＥＴ.example.com",
    "ｉｎｔｒａｎｅｔ．ｅｘａｍｐｌｅ．ｃｏｍ",
    "ＩＮＴＲＡＮＥＴ．ＥＸＡＭＰＬＥ．ＣＯＭ",
    "intranet。example。com",
    "intranet｡example｡com",
    "intranet．example．com",
    "intra\u{AD}net.example.com",
    "\u{2170}ntranet.example.com",
    "\u{2170}NTRANET.example.com",
    "intranet.ｅｘａｍｐｌｅ.com",
    "intranet.example.ｃｏｍ",
    "Intranet.example.com.",
    "intranet.Example.com.",
    "intranet.example.Com",
    "ｉntranet.example.com",
    "intranet.exampl\u{AD}e.com",
    "INTRA\u{AD}NET.EXAMPLE.COM",
    "intranet.example.com\u{3002}",
];

#[test]
fn host_rewritings_are_all_denied() {
    assert!(HOSTS.len() >= 30);
    let deny = rule("ping", "host", "intranet.example.com", RuleAction::Deny);
    let allow = rule("ping", "host", "*.example.org", RuleAction::Allow);
    for host in HOSTS {
        assert!(matches(&deny, "ping", "host", host), "not denied: {host:?}");
        assert!(!matches(&allow, "ping", "host", host), "allowed: {host:?}");
    }
    assert!(!matches(&deny, "ping", "host", "intranet.example.org"));
}

/// Spellings of an address at evil.com (`to: *@evil.com`).
const ADDRESSES: &[&str] = &[
    "boss@evil.com",
    "boss@EVIL.com",
    "boss@Evil.Com",
    "BOSS@EVIL.COM",
    "boss@evil.COM",
    "boss@EvIl.CoM",
    "BOSS@evil.com",
    "boss@evil.com.",
    "boss@EVIL.COM.",
    "boss@ＥＶＩＬ.com",
    "boss@ｅｖｉｌ．ｃｏｍ",
    "boss@ＥＶＩＬ．ＣＯＭ",
    "boss@evil。com",
    "boss@evil｡com",
    " boss@EVIL.com",
    "boss@EVIL.com ",
    "boss@EVIL.com\n",
    "\tboss@EVIL.com",
    "boss@EVIL.com\r\n",
    "Boss <boss@EVIL.com>",
    "\"Boss\" <boss@evil.com>",
    "<boss@EVIL.com>",
    "boss@EVIL.com (Boss)",
    "alice@good.com, boss@EVIL.com",
    "alice@good.com;boss@EVIL.com",
    "boss@EVIL.com, alice@good.com",
    "boss@e\u{AD}vil.com",
    "boss@ev\u{2170}l.com",
    "boss+x@EVIL.com",
    "b.o.s.s@EVIL.com",
    "mailto:boss@EVIL.com",
    "boss@eVIL.com.",
];

#[test]
fn address_rewritings_are_all_denied() {
    assert!(ADDRESSES.len() >= 30);
    let deny = rule("send_mail", "to", "*@evil.com", RuleAction::Deny);
    let allow = rule("send_mail", "to", "*@good.com", RuleAction::Allow);
    for to in ADDRESSES {
        assert!(matches(&deny, "send_mail", "to", to), "not denied: {to:?}");
        assert!(!matches(&allow, "send_mail", "to", to), "allowed: {to:?}");
    }
    for fine in ["alice@good.com", "Alice@GOOD.com", "alice@ｇｏｏｄ.com"] {
        assert!(!matches(&deny, "send_mail", "to", fine), "{fine:?}");
        assert!(matches(&allow, "send_mail", "to", fine), "{fine:?}");
    }
}

/// `../` inside JSON text, each character written plainly or as a JSON escape.
fn json_rewritings() -> Vec<String> {
    let dots = [".", "\\u002e", "\\u002E"];
    let slashes = ["/", "\\/", "\\u002f", "\\u002F"];
    let mut out = Vec::new();
    for a in dots {
        for b in dots {
            for s in slashes {
                out.push(format!("{{\"path\": \"{a}{b}{s}etc/passwd\"}}"));
            }
        }
    }
    out.extend(
        [
            "[\"\\u002e\\u002e/x\"]",
            "{\"a\": {\"b\": \"x/\\u002e./y\"}}",
            "{\n  \"path\":\n  \"\\u002e\\u002e/etc\"\n}",
            "\"\\u002e\\u002e/etc\"",
        ]
        .map(String::from),
    );
    out
}

#[test]
fn json_rewritings_are_all_denied() {
    let texts = json_rewritings();
    assert!(texts.len() >= 30);
    let deny = rule("fs.read", "options", "re:.*\\.\\./.*", RuleAction::Deny);
    for text in &texts {
        assert!(
            matches(&deny, "fs.read", "options", text),
            "not denied: {text}"
        );
    }
    assert!(!matches(
        &deny,
        "fs.read",
        "options",
        "{\"path\": \"\\u002e/etc\"}"
    ));
    // `.` in a regex matches a newline too.
    let rm = rule("shell", "command", "re:.*rm -rf.*", RuleAction::Deny);
    assert!(matches(&rm, "shell", "command", "echo ok\nrm -rf /\n"));
}

/// `web_fetch` with a deny for the intranet, called as `tools call --yes` calls it: every
/// rewriting is denied by the gate, the reader stand-in receives no request, and the message
/// the model would get says a rule denied it without quoting the pattern. A page the rule does
/// not cover still goes through (the stand-in works).
#[tokio::test(flavor = "multi_thread")]
async fn web_fetch_rewritings_never_reach_the_reader() {
    let reader = servers::jina().await;
    let home = tempfile::tempdir().unwrap();
    let ctx = AppContext::open(Some(home.path())).unwrap();
    std::fs::write(
        ctx.paths().config_dir.join("settings.yaml"),
        format!(
            "web_fetch:\n  endpoint: {}/\n  api_key: null\npermission_rules:\n  - tool: web_fetch\n    when: {{url: \"https://intranet.example.com/**\"}}\n    action: deny\n",
            reader.base
        ),
    )
    .unwrap();
    ctx.reload_config();
    assert!(
        ctx.config_problems().is_empty(),
        "{:?}",
        ctx.config_problems()
    );
    for url in URLS {
        let out = direct::call(
            &ctx,
            "web_fetch",
            &params(&[("url", url)]),
            "conv-rewrites",
            |_| Answer::Approve,
            &discard(),
        )
        .await;
        assert_eq!(out.status, CallStatus::Denied, "{url:?}: {:?}", out.result);
        assert!(
            out.formatted.contains("denied by a permission rule"),
            "{}",
            out.formatted
        );
        assert!(!out.formatted.contains("intranet"), "{}", out.formatted);
    }
    assert!(reader.requests().is_empty(), "{:?}", reader.requests());
    let out = direct::call(
        &ctx,
        "web_fetch",
        &params(&[("url", "HTTPS://Docs.Example.org:443/a")]),
        "conv-rewrites",
        |_| Answer::Approve,
        &discard(),
    )
    .await;
    assert_eq!(out.status, CallStatus::Succeeded, "{:?}", out.result);
    let seen = reader.requests();
    assert_eq!(seen.len(), 1);
    // The reader is sent the canonical URL, the one the rules compared.
    assert_eq!(seen[0].uri, "/https://docs.example.org/a");
}

/// Values that only look a little like URLs or addresses are not failed closed: a Windows path,
/// a local file URL, plain text with a colon or an `@`.
#[test]
fn ordinary_values_are_read_not_refused() {
    use engine::permissions::rules::views;
    for text in [
        "C:\\Work\\notes.txt",
        "file:///home/me/notes.txt",
        "note: call at 10:30",
        "ping @team about v1.2",
        "3.14",
    ] {
        let v = views(&Value::String(text.into()));
        assert!(!v.unknown, "{text:?}: {v:?}");
    }
    let deny = rule("fs.read", "path", "*.exe", RuleAction::Deny);
    assert!(!matches(&deny, "fs.read", "path", "C:\\Work\\notes.txt"));
    let allow = rule("fs.read", "path", "file:///home/me/**", RuleAction::Allow);
    assert!(matches(
        &allow,
        "fs.read",
        "path",
        "file:///home/me/a/../notes.txt"
    ));
    assert!(!matches(
        &allow,
        "fs.read",
        "path",
        "file:///home/me/../../etc/passwd"
    ));
}
