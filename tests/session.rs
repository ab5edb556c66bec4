//! The session event log and `nib stats`, on real files in temp dirs: the
//! line format, concurrent emits, subscribers, and statistics over
//! hand-written logs with known answers.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{SystemTime, UNIX_EPOCH};

use nib::session::{EventLog, SessionError, Stats, stats};
use serde_json::{Value, json};

mod support;
use support::read_jsonl;

/// Parses `yyyy-mm-ddThh:mm:ss.mmmZ` strictly into unix milliseconds.
fn parse_rfc3339_ms(t: &str) -> Option<i64> {
    let re =
        regex::Regex::new(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$").unwrap();
    let c = re.captures(t)?;
    let n = |i: usize| c[i].parse::<i64>().unwrap();
    let (y, m, d) = (n(1), n(2), n(3));
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || n(4) > 23 || n(5) > 59 || n(6) > 60 {
        return None;
    }
    // days_from_civil (Howard Hinnant).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + n(4)) * 60 + n(5)) * 60 + n(6)) * 1000 + n(7))
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn log_lines_have_version_time_kind_then_fields_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let before = now_ms();
    let log = EventLog::create(dir.path()).unwrap();

    let id = log.id().to_string();
    let re = regex::Regex::new(r"^\d{8}-\d{6}-[0-9a-f]{4}$").unwrap();
    assert!(re.is_match(&id), "id {id}");
    assert_eq!(
        log.path(),
        dir.path()
            .join(".nib/sessions")
            .join(&id)
            .join("events.jsonl")
    );
    assert_eq!(
        fs::read_to_string(dir.path().join(".nib/.gitignore")).unwrap(),
        "*\n"
    );

    log.emit_json(
        "session.start",
        json!({"id": id, "root": "/w", "model": "m", "provider": "scripted",
               "strategy": "default", "nib_version": "0.1.0"}),
    )
    .unwrap();
    log.emit_json(
        "llm.req",
        json!({"step": 1, "model": "m", "messages": 3, "tools": 11}),
    )
    .unwrap();
    log.emit_json(
        "tool.call",
        json!({"step": 1, "call": 0, "id": "c1", "name": "fs-edit",
               "positional": "(fs-edit \"a\" \"x\" \"y\" #f)",
               "args": {"path": "a", "old": "x", "new": "y"}, "quirks": []}),
    )
    .unwrap();
    log.emit_json("turn.end", json!({"step": 1, "reason": "done"}))
        .unwrap();
    log.emit_json("error", Value::Null).unwrap();
    let after = now_ms();

    let raw = fs::read_to_string(log.path()).unwrap();
    assert!(raw.ends_with('\n'));
    let lines = read_jsonl(log.path());
    let kinds: Vec<&str> = lines.iter().map(|l| l["ev"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session.start", "llm.req", "tool.call", "turn.end", "error"]
    );
    let mut last_t = i64::MIN;
    for line in &lines {
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(&keys[..3], ["v", "t", "ev"]);
        assert_eq!(line["v"], 1);
        let t = line["t"].as_str().unwrap();
        let ms = parse_rfc3339_ms(t).unwrap_or_else(|| panic!("t = {t:?}"));
        assert!(
            before <= ms && ms <= after,
            "{t} not within the emit window"
        );
        assert!(ms >= last_t);
        last_t = ms;
    }
    // The event's fields follow, in the order given.
    let keys: Vec<&str> = lines[2]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "v",
            "t",
            "ev",
            "step",
            "call",
            "id",
            "name",
            "positional",
            "args",
            "quirks"
        ]
    );
    assert_eq!(lines[2]["args"]["old"], "x");
    // A known kind's fields are its type's: an error always has a message.
    assert_eq!(lines[4]["message"], "");
    assert_eq!(lines[4].as_object().unwrap().len(), 4);
}

#[test]
fn create_makes_a_new_session_each_time_and_keeps_an_existing_nib() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join(".nib")).unwrap();
    let a = EventLog::create(dir.path()).unwrap();
    let b = EventLog::create(dir.path()).unwrap();
    assert_ne!(a.id(), b.id());
    assert_ne!(a.path(), b.path());
    // An existing .nib is the user's: no .gitignore is forced into it.
    assert!(!dir.path().join(".nib/.gitignore").exists());
}

#[cfg(unix)]
#[test]
fn create_refuses_a_symlinked_nib() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".nib")).unwrap();
    let err = EventLog::create(dir.path()).unwrap_err();
    assert!(matches!(err, SessionError::NotADirectory { .. }), "{err}");
    assert!(err.to_string().contains(".nib"), "{err}");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn at_appends_to_the_given_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs/x/log.jsonl");
    {
        let log = EventLog::at(&path).unwrap();
        assert_eq!(log.path(), path);
        log.emit_json("error", json!({"message": "first"})).unwrap();
    }
    let log = EventLog::at(&path).unwrap();
    log.emit_json("error", json!({"message": "second"}))
        .unwrap();
    let lines = read_jsonl(&path);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["message"], "first");
    assert_eq!(lines[1]["message"], "second");
}

#[test]
fn emit_rejects_bad_fields_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let log = EventLog::at(&dir.path().join("e.jsonl")).unwrap();
    let err = log
        .emit_json("error", json!(["not", "an object"]))
        .unwrap_err();
    assert!(err.to_string().contains("JSON object"), "{err}");
    let err = log.emit_json("error", json!({"t": "mine"})).unwrap_err();
    assert!(err.to_string().contains("`t` is reserved"), "{err}");
    let err = log.emit_json("", json!({})).unwrap_err();
    assert!(matches!(err, SessionError::BadEvent { .. }));
    assert_eq!(fs::read_to_string(log.path()).unwrap(), "");
}

#[test]
fn concurrent_emits_never_interleave_lines() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(EventLog::at(&dir.path().join("e.jsonl")).unwrap());
    let threads = 8;
    let per_thread = 150;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                // Big enough that a torn write would show.
                let payload = format!("{t}").repeat(6000);
                for i in 0..per_thread {
                    log.emit_json(
                        "test.burst",
                        json!({"thread": t, "seq": i, "summary": payload}),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let lines = read_jsonl(log.path());
    assert_eq!(lines.len(), threads * per_thread);
    let mut next = vec![0u64; threads];
    for line in &lines {
        let t = line["thread"].as_u64().unwrap() as usize;
        assert_eq!(line["seq"], next[t], "thread {t}'s events out of order");
        assert_eq!(line["summary"].as_str().unwrap().len(), 6000);
        next[t] += 1;
    }
}

#[test]
fn subscribers_see_every_event_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(EventLog::at(&dir.path().join("e.jsonl")).unwrap());
    let seen_a: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen_b: Arc<Mutex<Vec<Value>>> = Arc::default();
    let a = Arc::clone(&seen_a);
    log.subscribe(move |e| {
        a.lock()
            .unwrap()
            .push(serde_json::from_str(&e.line).unwrap())
    });
    let b = Arc::clone(&seen_b);
    log.subscribe(move |e| {
        b.lock()
            .unwrap()
            .push(serde_json::from_str(&e.line).unwrap())
    });

    let handles: Vec<_> = (0..4)
        .map(|t| {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                for i in 0..50 {
                    log.emit_json(
                        "write",
                        json!({"path": format!("f{t}"), "version": format!("v{i}")}),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let lines = read_jsonl(log.path());
    assert_eq!(lines.len(), 200);
    assert_eq!(*seen_a.lock().unwrap(), lines);
    assert_eq!(*seen_b.lock().unwrap(), lines);
}

#[test]
fn a_subscriber_emitting_on_its_own_log_gets_an_error_not_a_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(EventLog::at(&dir.path().join("e.jsonl")).unwrap());
    let inner: Arc<Mutex<Option<String>>> = Arc::default();
    let (weak, slot) = (Arc::downgrade(&log), Arc::clone(&inner));
    log.subscribe(move |_| {
        if let Some(log) = weak.upgrade() {
            let r = log.emit_json("error", json!({"message": "nested"}));
            *slot.lock().unwrap() = r.err().map(|e| e.to_string());
        }
    });
    log.emit_json("error", json!({"message": "outer"})).unwrap();
    let msg = inner.lock().unwrap().clone().unwrap();
    assert!(msg.contains("subscriber"), "{msg}");
    assert_eq!(read_jsonl(log.path()).len(), 1);
    // And the log still works afterwards.
    log.emit_json("error", json!({"message": "again"})).unwrap();
    assert_eq!(read_jsonl(log.path()).len(), 2);
}

// ---------------------------------------------------------------- stats

/// Writes events as a log would, returning how many lines were written.
struct Fixture {
    lines: Vec<String>,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture { lines: Vec::new() }
    }

    fn ev(&mut self, ev: &str, fields: Value) -> &mut Self {
        let mut obj = serde_json::Map::new();
        obj.insert("v".into(), json!(1));
        obj.insert("t".into(), json!("2026-11-30T12:34:56.789Z"));
        obj.insert("ev".into(), json!(ev));
        obj.extend(fields.as_object().unwrap().clone());
        self.lines.push(Value::Object(obj).to_string());
        self
    }

    fn resp(&mut self, step: u64, model: &str, usage: [u64; 3], calls: u64) -> &mut Self {
        self.ev(
            "llm.req",
            json!({"step": step, "model": model, "messages": step * 2, "tools": 11}),
        );
        self.ev(
            "llm.resp",
            json!({"step": step, "model": model, "duration_ms": 900,
                   "usage": {"prompt": usage[0], "cached": usage[1], "completion": usage[2]},
                   "tool_calls": calls, "finish": if calls > 0 { "tool_calls" } else { "stop" }}),
        )
    }

    fn call(&mut self, step: u64, call: u64, name: &str, path: &str) -> &mut Self {
        self.ev(
            "tool.call",
            json!({"step": step, "call": call, "id": format!("c{step}-{call}"), "name": name,
                   "positional": format!("({name} \"{path}\")"), "args": {"path": path},
                   "quirks": []}),
        )
    }

    /// An fs-edit result: `kind` None means success.
    #[allow(clippy::too_many_arguments)]
    fn edit_result(
        &mut self,
        step: u64,
        call: u64,
        path: &str,
        kind: Option<&str>,
        refused: bool,
        edits: u64,
        form: &str,
    ) -> &mut Self {
        let ok = kind.is_none() && !refused;
        self.ev(
            "tool.result",
            json!({"step": step, "call": call, "name": "fs-edit", "ok": ok, "refused": refused,
                   "kind": kind, "summary": if ok { "edited" } else { "edit 1 of 1 failed" },
                   "diff_size": if ok { 4 } else { 0 }, "edits": edits,
                   "edits_form": form, "path": path}),
        )
    }

    /// fs-edit call + result in one go.
    #[allow(clippy::too_many_arguments)]
    fn edit(
        &mut self,
        step: u64,
        call: u64,
        path: &str,
        kind: Option<&str>,
        refused: bool,
        edits: u64,
        form: &str,
    ) -> &mut Self {
        self.call(step, call, "fs-edit", path);
        if !refused {
            self.ev(
                "guard",
                json!({"step": step, "call": call, "decision": "write", "reasons": []}),
            );
            self.ev(
                "confirm",
                json!({"step": step, "call": call, "kind": "write", "answer": "yes", "by": "policy"}),
            );
        }
        self.edit_result(
            step,
            call,
            path.trim_start_matches("./"),
            kind,
            refused,
            edits,
            form,
        )
    }

    fn other(&mut self, step: u64, call: u64, name: &str, path: &str) -> &mut Self {
        self.call(step, call, name, path);
        self.ev(
            "tool.result",
            json!({"step": step, "call": call, "name": name, "ok": true, "refused": false,
                   "kind": null, "summary": "ok", "diff_size": 0}),
        )
    }

    fn write_to(&self, path: &Path, tail: &str) -> usize {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text.push_str(tail);
        fs::write(path, text).unwrap();
        self.lines.len()
    }
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// Two logs: `a` all alpha, `b` beta and then one alpha reply, with a bad
/// line and a cut-off last line.
fn two_model_logs(dir: &Path) -> (Vec<PathBuf>, u64) {
    let mut a = Fixture::new();
    a.ev(
        "session.start",
        json!({"id": "a", "root": "/w", "model": "alpha", "provider": "openai",
               "strategy": "default", "nib_version": "0.1.0"}),
    );
    // 1: read a file.
    a.resp(1, "alpha", [1000, 0, 50], 1)
        .other(1, 0, "fs-read", "src/a.rs");
    // 2: edit a.rs, not found.
    a.resp(2, "alpha", [2000, 1000, 100], 1).edit(
        2,
        0,
        "src/a.rs",
        Some("not_found"),
        false,
        1,
        "single",
    );
    // 3: lone re-edit of a.rs (list of 3), ambiguous.
    a.resp(3, "alpha", [3000, 2000, 80], 1).edit(
        3,
        0,
        "src/a.rs",
        Some("ambiguous"),
        false,
        3,
        "list",
    );
    // 4: lone re-edit again, through "./", edits sent as a string: ok.
    a.resp(4, "alpha", [4000, 3000, 60], 1).edit(
        4,
        0,
        "./src/a.rs",
        None,
        false,
        2,
        "list-as-string",
    );
    // 5: two calls: not lone even though one re-edits a.rs.
    a.resp(5, "alpha", [5000, 4000, 70], 2)
        .edit(5, 0, "src/a.rs", Some("no_change"), false, 1, "single")
        .edit(5, 1, "src/b.rs", None, false, 1, "single");
    // 6: lone re-edit of b.rs (edited in 5), refused by the guard.
    a.resp(6, "alpha", [6000, 5000, 40], 1);
    a.call(6, 0, "fs-edit", "src/b.rs");
    a.ev(
        "guard",
        json!({"step": 6, "call": 0, "decision": "security",
               "reasons": [{"rule": "aws-key", "param": "new", "message": "credential"}]}),
    );
    a.ev(
        "confirm",
        json!({"step": 6, "call": 0, "kind": "security", "answer": "no", "by": "policy"}),
    );
    a.ev(
        "tool.result",
        json!({"step": 6, "call": 0, "name": "fs-edit", "ok": false, "refused": true,
               "kind": null, "summary": "refused", "diff_size": 0, "edits": 1,
               "edits_form": "single", "path": "src/b.rs"}),
    );
    // 7: a shell call in between breaks the chain ...
    a.resp(7, "alpha", [7000, 6000, 10], 1)
        .other(7, 0, "shell", "");
    // 8: ... so this edit of b.rs is not a lone re-edit.
    a.resp(8, "alpha", [8000, 7000, 10], 1)
        .edit(8, 0, "src/b.rs", None, false, 1, "single");
    a.ev("write", json!({"path": "src/b.rs", "version": "v3"}));
    // 9: the final answer, no calls.
    a.resp(9, "alpha", [9000, 8000, 5], 0);
    a.ev("turn.end", json!({"step": 9, "reason": "done"}));
    let a_path = dir.join("a.jsonl");
    let a_events = a.write_to(&a_path, "");

    let mut b = Fixture::new();
    b.ev(
        "session.start",
        json!({"id": "b", "root": "/w", "model": "beta", "provider": "ollama",
               "strategy": "default", "nib_version": "0.1.0"}),
    );
    b.resp(1, "beta", [500, 100, 20], 1)
        .edit(1, 0, "src/c.rs", Some("invalid"), false, 4, "list");
    b.resp(2, "beta", [700, 200, 30], 1).edit(
        2,
        0,
        "src/c.rs",
        Some("new_already_present"),
        false,
        1,
        "single",
    );
    b.ev("turn.end", json!({"step": 2, "reason": "step_limit"}));
    // A new turn: the first reply is not a re-edit of the last turn's file.
    b.resp(3, "beta", [900, 300, 40], 1)
        .edit(3, 0, "src/c.rs", Some("read"), false, 1, "single");
    b.lines.push("this is not json".to_string());
    b.lines.push("[1, 2, 3]".to_string());
    // The model changes mid-file: later tool events count for alpha.
    b.resp(4, "alpha", [100, 0, 10], 1)
        .edit(4, 0, "src/d.rs", None, false, 1, "single");
    let b_path = dir.join("b.jsonl");
    let b_lines = b.write_to(
        &b_path,
        r#"{"v":1,"t":"2026-11-30T12:34:57.000Z","ev":"tool.re"#,
    );

    (vec![a_path, b_path], (a_events + b_lines - 2) as u64)
}

#[test]
fn stats_over_two_models_have_the_known_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, events) = two_model_logs(dir.path());
    let s: Stats = stats(&paths).unwrap();

    assert_eq!(s.files, 2);
    assert_eq!(s.events, events);
    assert_eq!(s.bad_lines, 2);
    assert_eq!(s.truncated_files, 1);
    let names: Vec<&str> = s.models.iter().map(|m| m.model.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);

    let alpha = &s.models[0];
    assert_eq!(alpha.requests, 10);
    assert_eq!(alpha.tokens.prompt, 45_100);
    assert_eq!(alpha.tokens.cached, 36_000);
    assert_eq!(alpha.tokens.completion, 435);
    assert!(close(alpha.prompt_per_request, 4510.0));
    let e = &alpha.fs_edit;
    assert_eq!((e.calls, e.ok, e.failed), (8, 4, 4));
    assert!(close(e.failure_rate, 0.5));
    for k in [
        &e.by_kind.not_found,
        &e.by_kind.not_unique,
        &e.by_kind.validation,
        &e.by_kind.refused,
    ] {
        assert_eq!(k.count, 1);
        assert!(close(k.rate, 0.125));
    }
    assert_eq!(e.by_kind.other.count, 0);
    assert_eq!(e.edits, 11);
    assert!(close(e.edits_per_call, 11.0 / 8.0));
    assert_eq!((e.list_calls, e.list_as_string_calls), (2, 1));
    assert!(close(e.list_share, 0.25));
    // Replies with calls: a's 1-8 and b's 4. Lone re-edits: a's 3, 4, 6.
    assert_eq!(alpha.replies, 9);
    assert_eq!(alpha.lone_re_edits, 3);
    assert!(close(alpha.lone_re_edit_share, 3.0 / 9.0));

    let beta = &s.models[1];
    assert_eq!(beta.requests, 3);
    assert_eq!(beta.tokens.prompt, 2100);
    assert_eq!(beta.tokens.cached, 600);
    assert_eq!(beta.tokens.completion, 90);
    assert!(close(beta.prompt_per_request, 700.0));
    let e = &beta.fs_edit;
    assert_eq!((e.calls, e.ok, e.failed), (3, 0, 3));
    assert_eq!(e.by_kind.validation.count, 1);
    assert_eq!(e.by_kind.not_found.count, 1);
    assert_eq!(e.by_kind.other.count, 1);
    assert_eq!(e.by_kind.not_unique.count + e.by_kind.refused.count, 0);
    assert!(close(e.failure_rate, 1.0));
    assert!(close(e.edits_per_call, 2.0));
    assert!(close(e.list_share, 1.0 / 3.0));
    assert_eq!((beta.replies, beta.lone_re_edits), (3, 1));

    let t = &s.total;
    assert_eq!(t.model, "total");
    assert_eq!(t.requests, 13);
    assert_eq!(t.tokens.prompt, 47_200);
    assert!(close(t.prompt_per_request, 47_200.0 / 13.0));
    let e = &t.fs_edit;
    assert_eq!((e.calls, e.ok, e.failed), (11, 4, 7));
    assert_eq!(e.by_kind.not_found.count, 2);
    assert_eq!(e.by_kind.validation.count, 2);
    assert!(close(e.by_kind.not_found.rate, 2.0 / 11.0));
    assert!(close(e.edits_per_call, 17.0 / 11.0));
    assert!(close(e.list_share, 3.0 / 11.0));
    assert_eq!((t.replies, t.lone_re_edits), (12, 4));
    assert!(close(t.lone_re_edit_share, 4.0 / 12.0));

    // JSON for --json.
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["total"]["fs_edit"]["calls"], 11);
    assert_eq!(j["models"][0]["model"], "alpha");
    assert_eq!(
        j["models"][1]["fs_edit"]["by_kind"]["not_unique"]["rate"],
        0.0
    );
    assert_eq!(j["truncated_files"], 1);

    // The table.
    let table = s.to_string();
    assert!(table.starts_with(&format!("2 files, {events} events (2 unreadable lines skipped; 1 file with a cut-off last line)\n")), "{table}");
    for needle in ["alpha", "beta", "total", "12.5%", "1.38", "33.3%", "4510.0"] {
        assert!(table.contains(needle), "{needle} missing from\n{table}");
    }
}

#[test]
fn a_cut_off_last_line_alone_is_tolerated() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = Fixture::new();
    f.resp(1, "m", [10, 0, 1], 1)
        .edit(1, 0, "x", None, false, 1, "single");
    let path = dir.path().join("e.jsonl");
    f.write_to(&path, r#"{"v":1,"t":"2026-11-30T1"#);
    let s = stats(&[path]).unwrap();
    assert_eq!((s.bad_lines, s.truncated_files), (0, 1));
    assert_eq!(s.total.fs_edit.calls, 1);
    assert_eq!(s.models.len(), 1);
    // One model: no separate total row.
    assert!(!s.to_string().contains("total"), "{s}");
}

#[test]
fn stats_read_what_the_log_writes() {
    let dir = tempfile::tempdir().unwrap();
    let log = EventLog::create(dir.path()).unwrap();
    for step in 1..=2u64 {
        log.emit_json(
            "llm.resp",
            json!({"step": step, "model": "m", "duration_ms": 5,
                   "usage": {"prompt": 100, "cached": 50, "completion": 5},
                   "tool_calls": 1, "finish": "tool_calls"}),
        )
        .unwrap();
        log.emit_json(
            "tool.call",
            json!({"step": step, "call": 0, "id": "x", "name": "fs-edit",
                   "positional": "(fs-edit \"a\" \"x\" \"y\" #f)", "args": {"path": "a"},
                   "quirks": []}),
        )
        .unwrap();
        log.emit_json("tool.result",
            json!({"step": step, "call": 0, "name": "fs-edit", "ok": step == 2,
                   "refused": false, "kind": if step == 2 { Value::Null } else { json!("not_found") },
                   "summary": "s", "diff_size": 1, "edits": 1, "edits_form": "single", "path": "a"}),
        )
        .unwrap();
    }
    let s = stats(&[log.path().to_path_buf()]).unwrap();
    assert_eq!(s.events, 6);
    assert_eq!(s.total.requests, 2);
    assert!(close(s.total.prompt_per_request, 100.0));
    assert_eq!(s.total.fs_edit.by_kind.not_found.count, 1);
    assert_eq!((s.total.replies, s.total.lone_re_edits), (2, 1));
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.jsonl");
    fs::write(&good, "").unwrap();
    let missing = dir.path().join("nope/events.jsonl");
    let err = stats(&[good, missing.clone()]).unwrap_err();
    assert!(matches!(err, SessionError::Io { .. }), "{err}");
    assert!(
        err.to_string().contains(&missing.display().to_string()),
        "{err}"
    );
    assert!(matches!(stats(&[]), Err(SessionError::NoFiles)));
}

#[test]
fn an_empty_log_has_no_models() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.jsonl");
    fs::write(&path, "\n\n").unwrap();
    let s = stats(&[path]).unwrap();
    assert_eq!((s.events, s.bad_lines, s.truncated_files), (0, 0, 0));
    assert!(s.models.is_empty());
    assert!(s.total.prompt_per_request.is_none());
    assert!(s.to_string().contains("no model requests"), "{s}");
}

#[test]
fn a_torn_last_line_is_cut_off_before_the_next_append_and_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    {
        let log = EventLog::at(&path).unwrap();
        log.emit_json("error", json!({"message": "first"})).unwrap();
    }
    // A crash in the middle of the next append.
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(
        &mut f,
        br#"{"v":1,"t":"2026-12-04T00:00:00.000Z","ev":"err"#,
    )
    .unwrap();
    drop(f);
    let log = EventLog::at(&path).unwrap();
    log.emit_json("error", json!({"message": "second"}))
        .unwrap();
    let lines = read_jsonl(&path);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["message"], "first");
    assert_eq!(lines[1]["ev"], "log.repaired");
    assert_eq!(lines[1]["dropped_bytes"], 47);
    assert_eq!(lines[2]["message"], "second");
    // A log with nothing but a torn line is emptied, then written whole.
    let only = dir.path().join("only.jsonl");
    fs::write(&only, "{\"v\":1,\"t\"").unwrap();
    EventLog::at(&only).unwrap();
    let lines = read_jsonl(&only);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["ev"], "log.repaired");
}

#[test]
fn stats_skip_a_torn_line_and_read_the_line_glued_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    let req = |model: &str| {
        format!(
            "{{\"v\":1,\"t\":\"2026-12-04T00:00:00.000Z\",\"ev\":\"x.note\",\"model\":\"{model}\"}}"
        )
    };
    // An old log: a torn line glued to the next, and a torn last line.
    let text = format!(
        "{}\n{{\"v\":1,\"t\":\"2026-12-04T00:0{}\n{{\"v\":1,\"t\":\"20",
        req("m1"),
        req("m2")
    );
    fs::write(&path, text).unwrap();
    let s: Stats = stats(&[path]).unwrap();
    assert_eq!(s.events, 2, "{s:?}");
    assert_eq!(s.truncated_files, 1);
    assert!(s.to_string().contains("cut-off last line"), "{s}");
}
