//! `nib apply` as a whole process on large files, beside a floor measured in
//! the same run (a plain Rust read + `str::find` + write of the same file)
//! and, when `CODEX_BIN` names a Codex CLI binary, beside Codex's own
//! applier (`codex --codex-run-as-apply-patch PATCH`) on the same files with
//! the same changes as a V4A patch.
//!
//! Run with `cargo bench --bench apply` (or `CODEX_BIN=/path/to/codex cargo
//! bench --bench apply`). Prints a table of medians and each case's ratio
//! to the floor (and to Codex); the ratios are what to compare across
//! machines. Cases: one exact edit in 10 MB; 100 edits in one call in 10
//! MB; a refused edit on 100,000 lines explained with its nearest lines; a
//! dedented edit, and 100 dedented edits in one call (each found at a
//! tolerant level), on 100,000 lines; 1,000 and 2,000 edits in one call on
//! 100,000 lines (in shuffled order, and in file order for Codex, whose
//! chunks must come in file order and whose patch must fit in one 128 KiB
//! argument); and old texts made of 10,000 and 50,000 equal lines, as
//! fs-edit and as a unified diff's context.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 11;

/// One workload: the file, nib's input, nib's expected exit code, and the
/// same change as a V4A patch for Codex (None when it cannot take it).
struct Case {
    name: String,
    text: String,
    input: String,
    format: Option<&'static str>,
    code: i32,
    codex: Option<String>,
}

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir for the benchmark");
    let big = code(250_000);
    let small = code(100_000);
    let codex = std::env::var_os("CODEX_BIN").map(PathBuf::from);
    println!(
        "files: {:.1} MB / {} lines, {:.1} MB / {} lines; {RUNS} runs each, medians\n",
        big.len() as f64 / 1e6,
        250_000,
        small.len() as f64 / 1e6,
        100_000
    );

    let floor = measure(|| {
        let path = dir.path().join("floor.txt");
        fs::write(&path, &big).expect("write");
        let start = Instant::now();
        let text = fs::read_to_string(&path).expect("read");
        let at = text
            .find("value_125001 = compute(125001, options.retry_limit);")
            .expect("present");
        let mut out = String::with_capacity(text.len() + 8);
        out.push_str(&text[..at]);
        out.push_str("value_125001 = compute(125002, options.retry_limit);");
        out.push_str(&text[at + "value_125001 = compute(125001, options.retry_limit);".len()..]);
        fs::write(&path, out).expect("write");
        start.elapsed()
    });
    let spawn = measure(|| time(Command::new(nib()).arg("--version"), &[0]));

    let refused = r#"{"path": "f.txt", "old": "    value_50001 = compute(50001, options.retry_limit) + extra;\n    total += value_50001;\n", "new": "x"}"#;
    let dedent = r#"{"path": "f.txt", "old": "value_60001 = compute(60001, options.retry_limit);\ntotal += value_60001;\n", "new": "value_60001 = compute(60001, options.retry_limit) * 2;\ntotal += value_60001;\n"}"#;
    let mut cases = vec![
        Case {
            name: "one exact edit, 10 MB".into(),
            text: big.clone(),
            input: single(125_001, 125_002),
            format: None,
            code: 0,
            codex: Some(v4a(&spread(1, 125_001, 1))),
        },
        Case {
            name: "100 edits in one call, 10 MB".into(),
            text: big.clone(),
            input: edits_call(&spread(100, 11, 1_237)),
            format: None,
            code: 0,
            codex: Some(v4a(&spread(100, 11, 1_237))),
        },
        Case {
            name: "refused with nearest lines, 100k lines".into(),
            text: small.clone(),
            input: refused.into(),
            format: None,
            code: 1,
            codex: Some(
                "*** Begin Patch\n*** Update File: f.txt\n@@\n-    value_50001 = compute(50001, \
                 options.retry_limit) + extra;\n-    total += value_50001;\n+x\n*** End Patch\n"
                    .into(),
            ),
        },
        Case {
            name: "dedented edit applied, 100k lines".into(),
            text: small.clone(),
            input: dedent.into(),
            format: None,
            code: 0,
            codex: None,
        },
    ];
    cases.push(Case {
        name: "100 dedented edits in one call, 100k lines".into(),
        text: small.clone(),
        input: dedented_call(&shuffled(&spread(100, 3, 499))),
        format: None,
        code: 0,
        codex: None,
    });
    cases.push(Case {
        name: "1000 dedented edits in one call, 100k lines".into(),
        text: small.clone(),
        input: dedented_call(&shuffled(&spread(1_000, 3, 49))),
        format: None,
        code: 0,
        codex: None,
    });
    cases.extend(shapes(&big, &small));
    for k in [1_000, 2_000] {
        let sites = spread(k, 3, 24);
        cases.push(Case {
            name: format!("{k} edits in one call, shuffled, 100k lines"),
            text: small.clone(),
            input: edits_call(&shuffled(&sites)),
            format: None,
            code: 0,
            codex: None,
        });
        let patch = v4a(&sites);
        cases.push(Case {
            name: format!("{k} edits in one call, file order, 100k lines"),
            text: small.clone(),
            input: edits_call(&sites),
            format: None,
            code: 0,
            // One argument holds at most 128 KiB on Linux.
            codex: (patch.len() < 128 * 1024).then_some(patch),
        });
    }
    for n in [10_000, 50_000] {
        let (text, input) = equal_lines(n);
        cases.push(Case {
            name: format!("old of {n} equal lines + 1 edit"),
            text: text.clone(),
            input,
            format: None,
            code: 0,
            codex: None,
        });
        cases.push(Case {
            name: format!("udiff, {n} equal context lines"),
            text,
            input: equal_lines_udiff(n),
            format: Some("udiff"),
            code: 0,
            codex: None,
        });
    }

    let with_codex = codex.is_some();
    println!(
        "{:<46} {:>10} {:>8} {:>10} {:>8}",
        "case",
        "median",
        "÷ floor",
        if with_codex { "codex" } else { "" },
        if with_codex { "÷ codex" } else { "" }
    );
    println!(
        "{:<46} {:>10} {:>8}",
        "floor: read + str::find + write (in process)",
        ms(floor),
        "1.0"
    );
    println!(
        "{:<46} {:>10} {:>8.2}",
        "process start: nib --version",
        ms(spawn),
        ratio(spawn, floor)
    );
    if let Some(bin) = &codex {
        let start = measure(|| time(Command::new(bin).arg("--version"), &[0]));
        println!(
            "{:<46} {:>10} {:>8.2}",
            "process start: codex --version",
            ms(start),
            ratio(start, floor)
        );
    }
    for case in &cases {
        let ws = dir.path().join("ws");
        let input = dir.path().join("calls.txt");
        fs::write(&input, &case.input).expect("calls");
        let t = measure(|| {
            reset(&ws, &case.text);
            let mut cmd = Command::new(nib());
            cmd.arg("apply").arg("--json");
            if let Some(f) = case.format {
                cmd.args(["--format", f]);
            }
            time(cmd.arg("--root").arg(&ws).arg(&input), &[case.code])
        });
        let cpu = last_cpu();
        let theirs = match (&codex, &case.codex) {
            (Some(bin), Some(patch)) => Some(measure(|| {
                reset(&ws, &case.text);
                time(
                    Command::new(bin)
                        .arg("--codex-run-as-apply-patch")
                        .arg(patch)
                        .current_dir(&ws),
                    &[case.code],
                )
            })),
            _ => None,
        };
        match theirs {
            Some(c) => println!(
                "{:<46} {:>10} {:>8.2} {:>10} {:>8.2}   cpu {}",
                case.name,
                ms(t),
                ratio(t, floor),
                ms(c),
                ratio(t, c),
                ms(cpu)
            ),
            None => println!(
                "{:<46} {:>10} {:>8.2}   cpu {}",
                case.name,
                ms(t),
                ratio(t, floor),
                ms(cpu)
            ),
        }
    }
    println!("\nthe edit engine alone, in process (nib::edit::apply):");
    for case in cases.iter().filter(|c| c.format.is_none()) {
        let Ok(call) = nib::prim::fs_edit_call(&case.input) else {
            continue;
        };
        let t = measure(|| {
            let start = Instant::now();
            let result = nib::edit::apply(&case.text, &call.edits, &[]);
            let took = start.elapsed();
            assert_eq!(result.is_ok(), case.code == 0, "{}", case.name);
            took
        });
        println!("{:<46} {:>10} {:>8.2}", case.name, ms(t), ratio(t, floor));
    }
    check_dedent(dir.path(), &small, dedent);
}

fn reset(ws: &Path, text: &str) {
    let _ = fs::remove_dir_all(ws);
    fs::create_dir_all(ws).expect("workspace");
    fs::write(ws.join("f.txt"), text).expect("reset");
}

/// `count` edit sites (odd line numbers of `code`'s value lines), `step`
/// lines apart from `first` on.
fn spread(count: usize, first: usize, step: usize) -> Vec<usize> {
    (0..count).map(|k| 1 + 2 * (k * step + first / 2)).collect()
}

/// Other people's shapes: CRLF, long lines, deep indentation, edits at
/// the end, a few huge edits.
fn shapes(big: &str, small: &str) -> Vec<Case> {
    let crlf = small.replace('\n', "\r\n");
    let deep: String = small.replace("\n    ", &format!("\n{}", " ".repeat(40)));
    // 10,000 lines of about 1,000 bytes each.
    let long: String = (0..10_000)
        .map(|i| format!("row_{i} = [{}]\n", "7, ".repeat(330)))
        .collect();
    let long_call = {
        let edits: Vec<String> = (0..100)
            .map(|k| {
                let i = k * 97 + 5;
                format!(r#"{{"old": "row_{i} = [7, ", "new": "row_{i} = [8, "}}"#)
            })
            .collect();
        format!(r#"{{"path": "f.txt", "edits": [{}]}}"#, edits.join(", "))
    };
    let last = 249_999;
    // Three edits each replacing 5,000 lines (old over the automaton's
    // limit: a linear search each).
    let lines: Vec<&str> = small.lines().collect();
    let huge_call = call_of([10_001usize, 40_001, 80_001].iter().map(|&at| {
        let old = lines[at..at + 5_000].join("\n") + "\n";
        let new = old.replace("compute(", "compute2(");
        (old, new)
    }));
    // 100 edits of three lines each that add a line (the issue's own
    // shape), as fs-edit and as a V4A patch with the same lines.
    let sites = spread(100, 11, 1_237);
    let three_lines = |i: usize| {
        format!(
            "    value_{i} = compute({i}, options.retry_limit);\n    total += value_{i};\n    value_{j} = compute({j}, options.retry_limit);\n",
            j = i + 2
        )
    };
    let added_call = call_of(shuffled(&sites).into_iter().map(|i| {
        let old = three_lines(i);
        let new = old.replacen(
            ";\n    value_",
            &format!(";\n    log(value_{i});\n    value_"),
            1,
        );
        (old, new)
    }));
    let added_v4a = {
        let mut out = String::from("*** Begin Patch\n*** Update File: f.txt\n");
        for &i in &sites {
            out.push_str(&format!(
                "@@\n     value_{i} = compute({i}, options.retry_limit);\n     total += value_{i};\n+    log(value_{i});\n     value_{j} = compute({j}, options.retry_limit);\n",
                j = i + 2
            ));
        }
        out.push_str("*** End Patch\n");
        out
    };
    vec![
        Case {
            name: "100 three-line edits adding a line, 10 MB".into(),
            text: big.to_string(),
            input: added_call,
            format: None,
            code: 0,
            codex: Some(added_v4a),
        },
        Case {
            name: "CRLF: 2000 edits, shuffled, 100k lines".into(),
            text: crlf.clone(),
            input: edits_call(&shuffled(&spread(2_000, 3, 24))),
            format: None,
            code: 0,
            codex: None,
        },
        Case {
            name: "CRLF: 100 dedented edits, 100k lines".into(),
            text: crlf,
            input: dedented_call(&shuffled(&spread(100, 3, 499))),
            format: None,
            code: 0,
            codex: None,
        },
        Case {
            name: "40-column indent: 1000 dedented edits".into(),
            text: deep,
            input: dedented_call(&shuffled(&spread(1_000, 3, 49))),
            format: None,
            code: 0,
            codex: None,
        },
        Case {
            name: "long lines (1 KB): 100 edits, 10 MB".into(),
            text: long,
            input: long_call,
            format: None,
            code: 0,
            codex: None,
        },
        Case {
            name: "one edit on the last line, 10 MB".into(),
            text: big.to_string(),
            input: single(last, last + 1),
            format: None,
            code: 0,
            codex: Some(v4a(&[last])),
        },
        Case {
            name: "3 edits of 5,000 lines each, 100k lines".into(),
            text: small.to_string(),
            input: huge_call,
            format: None,
            code: 0,
            codex: None,
        },
    ]
}

/// The sites in a fixed pseudo-random order.
fn shuffled(sites: &[usize]) -> Vec<usize> {
    let mut out = sites.to_vec();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..out.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.swap(i, (state % (i as u64 + 1)) as usize);
    }
    out
}

/// One fs-edit call of f.txt with these (old, new) edits.
fn call_of(edits: impl Iterator<Item = (String, String)>) -> String {
    let edits: Vec<String> = edits
        .map(|(old, new)| {
            format!(
                r#"{{"old": {}, "new": {}}}"#,
                serde_json::to_string(&old).unwrap_or_default(),
                serde_json::to_string(&new).unwrap_or_default()
            )
        })
        .collect();
    format!(r#"{{"path": "f.txt", "edits": [{}]}}"#, edits.join(", "))
}

/// One fs-edit call changing the value line at each site.
fn edits_call(sites: &[usize]) -> String {
    let edits: Vec<String> = sites
        .iter()
        .map(|i| {
            format!(
                r#"{{"old": "value_{i} = compute({i}, ", "new": "value_{i} = compute({i} + 1, "}}"#
            )
        })
        .collect();
    format!(r#"{{"path": "f.txt", "edits": [{}]}}"#, edits.join(", "))
}

/// One fs-edit call changing each site's two lines, sent without their
/// indentation: every edit applies at the indentation level.
fn dedented_call(sites: &[usize]) -> String {
    let edits: Vec<String> = sites
        .iter()
        .map(|i| {
            format!(
                r#"{{"old": "value_{i} = compute({i}, options.retry_limit);\ntotal += value_{i};\n", "new": "value_{i} = compute({i}, options.retry_limit) * 2;\ntotal += value_{i};\n"}}"#
            )
        })
        .collect();
    format!(r#"{{"path": "f.txt", "edits": [{}]}}"#, edits.join(", "))
}

/// The same changes as a V4A patch: one chunk per site, in file order.
fn v4a(sites: &[usize]) -> String {
    let mut sorted = sites.to_vec();
    sorted.sort_unstable();
    let mut out = String::from("*** Begin Patch\n*** Update File: f.txt\n");
    for i in sorted {
        out.push_str(&format!(
            "@@\n-    value_{i} = compute({i}, options.retry_limit);\n+    value_{i} = compute({i} + 1, options.retry_limit);\n"
        ));
    }
    out.push_str("*** End Patch\n");
    out
}

/// A file of `n` equal lines between a first and a last line, and a call
/// of two edits: the first line, and old = the `n` equal lines and the
/// last line.
fn equal_lines(n: usize) -> (String, String) {
    let line = "    x = 1;\n";
    let text = format!("start\n{}end\n", line.repeat(n));
    let old = format!("{}end\n", line.repeat(n)).replace('\n', "\\n");
    let new = format!("{}END\n", line.repeat(n)).replace('\n', "\\n");
    let call = format!(
        r#"{{"path": "f.txt", "edits": [{{"old": "start\n", "new": "START\n"}}, {{"old": "{old}", "new": "{new}"}}]}}"#
    );
    (text, call)
}

/// A unified diff of the last line of `equal_lines`'s file with all the
/// equal lines before it as context.
fn equal_lines_udiff(n: usize) -> String {
    let mut out = format!(
        "--- a/f.txt\n+++ b/f.txt\n@@ -2,{} +2,{} @@\n",
        n + 1,
        n + 1
    );
    for _ in 0..n {
        out.push_str("     x = 1;\n");
    }
    out.push_str("-end\n+END\n");
    out
}

/// Lines like an indented function body, each unique.
fn code(lines: usize) -> String {
    let mut out = String::with_capacity(lines * 40);
    out.push_str("def run():\n");
    for i in 1..lines {
        if i % 2 == 1 {
            out.push_str(&format!(
                "    value_{i} = compute({i}, options.retry_limit);\n"
            ));
        } else {
            out.push_str(&format!("    total += value_{};\n", i - 1));
        }
    }
    out
}

fn single(line: usize, to: usize) -> String {
    format!(
        r#"{{"path": "f.txt", "old": "value_{line} = compute({line}, ", "new": "value_{line} = compute({to}, "}}"#
    )
}

/// The dedented edit must land at the file's indentation.
fn check_dedent(dir: &Path, text: &str, call: &str) {
    let ws = dir.join("check");
    fs::create_dir_all(&ws).expect("workspace");
    fs::write(ws.join("f.txt"), text).expect("file");
    let input = dir.join("dedent.jsonl");
    fs::write(&input, call).expect("call");
    time(
        Command::new(nib())
            .args(["apply", "--root"])
            .arg(&ws)
            .arg(&input),
        &[0],
    );
    let after = fs::read_to_string(ws.join("f.txt")).expect("read back");
    assert!(
        after.contains("\n    value_60001 = compute(60001, options.retry_limit) * 2;\n    total += value_60001;\n"),
        "the dedented edit did not land at the file's indentation"
    );
    println!("\ndedented edit checked: applied at the file's indentation");
}

fn nib() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_nib"))
}

/// CPU time (user + system) of the finished children so far: the
/// difference around one run is that process's, which a busy machine
/// stretches far less than the wall clock.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the struct it is given, nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

thread_local! {
    /// The CPU time of each run measured so far, for `measure_cpu`.
    static CPU: std::cell::RefCell<Vec<Duration>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn time(cmd: &mut Command, codes: &[i32]) -> Duration {
    let cpu = children_cpu();
    let start = Instant::now();
    let out = cmd.output().expect("run nib");
    let took = start.elapsed();
    let cpu = children_cpu().saturating_sub(cpu);
    CPU.with(|c| c.borrow_mut().push(cpu));
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "nib exited {code}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn measure(mut run: impl FnMut() -> Duration) -> Duration {
    CPU.with(|c| c.borrow_mut().clear());
    let mut times: Vec<Duration> = (0..RUNS).map(|_| run()).collect();
    times.sort();
    times[RUNS / 2]
}

/// The median CPU time of the processes the last `measure` ran.
fn last_cpu() -> Duration {
    CPU.with(|c| {
        let mut v = c.borrow().clone();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or_default()
    })
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
