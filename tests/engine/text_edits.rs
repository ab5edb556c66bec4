//! The text-edits strategy (`scheme/strategies/text-edits.scm`) in a real
//! session: the scripted model over HTTP on 127.0.0.1 answers in text only,
//! with SEARCH/REPLACE blocks; the strategy applies them with `apply-text`
//! through the real Host and guard, and feeds the results back.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use nib::agent::{AgentConfig, Outcome, Status, run_task};
use nib::files::Workspace;
use nib::model::Provider;
use nib::model::scripted::{Script, ScriptedReply, ScriptedServer};
use nib::prim::Host;
use nib::session::EventLog;

const STRATEGY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/scheme/strategies/text-edits.scm"
);

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n";

/// What one session left: its workspace, outcome, events and the request
/// bodies the model received.
struct Session {
    _dir: tempfile::TempDir,
    root: PathBuf,
    outcome: Outcome,
    events: Vec<Value>,
    requests: Vec<Value>,
}

/// A workspace with calc.py; runs one task against the scripted replies.
fn session(replies: Vec<ScriptedReply>) -> Session {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("ws");
    fs::create_dir(&root).expect("ws");
    fs::write(root.join("calc.py"), CALC).expect("calc.py");
    let server = ScriptedServer::start(Script { replies }).expect("scripted model");
    let mut model = server.config(Provider::OpenAi);
    model.retries = 0;
    let ws = Workspace::open(&root).expect("workspace");
    let host = Arc::new(Host::unattended(ws, true));
    let log = Arc::new(EventLog::create(&root).expect("event log"));
    let cfg = AgentConfig {
        model,
        strategy: Some(PathBuf::from(STRATEGY)),
        hooks: Vec::new(),
        config_hooks: 0,
        settings: Vec::new(),
        history: serde_json::Value::Null,
        program: None,
        max_steps: 5,
        max_tokens: 0,
        deadline: Duration::from_secs(60),
    };
    let outcome = run_task(host, Arc::clone(&log), &cfg, "fix calc.py", |_| {}).expect("run");
    Session {
        events: read_events(log.path()),
        requests: server.requests(),
        _dir: dir,
        root,
        outcome,
    }
}

fn read_events(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).expect("event JSON"))
        .collect()
}

fn results_named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["ev"] == "tool.result" && e["name"] == name)
        .collect()
}

const FIX: &str = "Both functions use the wrong operator.\n\ncalc.py\n```\n<<<<<<< SEARCH\n\
                   def add(a, b):\n    return a - b\n=======\ndef add(a, b):\n    return a + b\n\
                   >>>>>>> REPLACE\n```\n\ncalc.py\n```\n<<<<<<< SEARCH\ndef mul(a, b):\n    \
                   return a + b\n=======\ndef mul(a, b):\n    return a * b\n>>>>>>> REPLACE\n```\n";

#[test]
fn search_replace_in_a_text_reply_is_applied_and_logged() {
    let Session {
        root,
        outcome,
        events,
        requests,
        _dir,
    } = session(vec![
        ScriptedReply::text(FIX),
        ScriptedReply::text("Fixed add and mul."),
    ]);
    let fed_back = requests[1].to_string();
    assert!(
        fed_back.contains("The edits in your reply were applied")
            && fed_back.contains("applied 2 edits to calc.py"),
        "{fed_back}"
    );
    assert_eq!(outcome.status, Status::Done, "{}", outcome.text);
    assert_eq!(outcome.text, "Fixed add and mul.");
    assert_eq!(outcome.steps, 2);
    assert_eq!(
        fs::read_to_string(root.join("calc.py")).expect("calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
    );
    let results = results_named(&events, "apply-text");
    assert_eq!(results.len(), 1, "one file, one result: {events:?}");
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[0]["path"], "calc.py");
    assert_eq!(results[0]["step"], 1);
    assert!(
        results[0]["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with("applied 2 edits to calc.py")),
        "{}",
        results[0]
    );
    let call = events
        .iter()
        .find(|e| e["ev"] == "tool.call" && e["name"] == "apply-text")
        .expect("the call event");
    assert_eq!(call["args"]["format"], "search-replace");
    assert!(
        events
            .iter()
            .any(|e| e["ev"] == "write" && e["path"] == "calc.py"),
        "{events:?}"
    );
}

#[test]
fn a_failed_text_edit_goes_back_to_the_model_and_it_tries_again() {
    let wrong = "calc.py\n```\n<<<<<<< SEARCH\n    return a / b\n=======\n    return a // b\n\
                 >>>>>>> REPLACE\n```\n";
    let Session {
        root,
        outcome,
        events,
        requests,
        _dir,
    } = session(vec![
        ScriptedReply::text(wrong),
        ScriptedReply::text(FIX),
        ScriptedReply::text("Done."),
    ]);
    assert_eq!(outcome.status, Status::Done, "{}", outcome.text);
    assert_eq!(outcome.steps, 3);
    let results = results_named(&events, "apply-text");
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[0]["ok"], false);
    assert_eq!(results[0]["kind"], "not_found");
    assert_eq!(results[1]["ok"], true);
    let fed_back = requests[1].to_string();
    assert!(
        fed_back.contains("were not applied; nothing was written")
            && fed_back.contains("Send the edits of every file again"),
        "{fed_back}"
    );
    assert!(
        fs::read_to_string(root.join("calc.py"))
            .expect("calc.py")
            .contains("return a * b")
    );
}

#[test]
fn a_reply_with_neither_calls_nor_edits_ends_the_task() {
    let Session {
        root,
        outcome,
        events,
        _dir,
        ..
    } = session(vec![ScriptedReply::text(
        "calc.py looks fine to me; a diff would start with --- but this is prose.",
    )]);
    assert_eq!(outcome.status, Status::Done);
    assert_eq!(outcome.steps, 1);
    assert!(results_named(&events, "apply-text").is_empty());
    assert_eq!(
        fs::read_to_string(root.join("calc.py")).expect("calc.py"),
        CALC
    );
}

#[test]
fn a_v4a_patch_or_a_diff_in_the_text_is_told_apart_by_its_markers() {
    let v4a = "Here is the patch:\n\n*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n\
               -    return a - b\n+    return a + b\n*** End Patch\n";
    let udiff = "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n\
                 -    return a - b\n+    return a + b\n```\n";
    for (text, format) in [(v4a, "v4a"), (udiff, "udiff")] {
        let s = session(vec![
            ScriptedReply::text(text),
            ScriptedReply::text("Done."),
        ]);
        assert_eq!(
            s.outcome.status,
            Status::Done,
            "{format}: {}",
            s.outcome.text
        );
        let call = s
            .events
            .iter()
            .find(|e| e["ev"] == "tool.call" && e["name"] == "apply-text")
            .unwrap_or_else(|| panic!("{format}: no apply-text call in {:?}", s.events));
        assert_eq!(call["args"]["format"], format);
        assert!(
            fs::read_to_string(s.root.join("calc.py"))
                .expect("calc.py")
                .starts_with("def add(a, b):\n    return a + b\n"),
            "{format}"
        );
    }
}
