//! `nib apply` as a whole process on large files, beside a floor measured in
//! the same run: a plain Rust read + `str::find` + write of the same file.
//!
//! Run with `cargo bench --bench apply`. Prints a table of medians and each
//! case's ratio to the floor; the ratios are what to compare across
//! machines. The cases are the ones the foundation issue sets targets for:
//! one exact edit in 10 MB, 100 edits in one call in 10 MB, a refused edit
//! on 100,000 lines explained with its nearest lines, and a dedented edit on
//! 100,000 lines.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 15;

fn main() {
    let dir = tempfile::tempdir().expect("a temp dir for the benchmark");
    let big = code(250_000);
    let small = code(100_000);
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

    let one = single(125_001, 125_002);
    let hundred = hundred_edits();
    let refused = r#"{"path": "f.txt", "old": "    value_50001 = compute(50001, options.retry_limit) + extra;\n    total += value_50001;\n", "new": "x"}"#;
    let dedent = r#"{"path": "f.txt", "old": "value_60001 = compute(60001, options.retry_limit);\ntotal += value_60001;\n", "new": "value_60001 = compute(60001, options.retry_limit) * 2;\ntotal += value_60001;\n"}"#;

    let cases = [
        ("one exact edit, 10 MB", &big, one.as_str(), 0),
        ("100 edits in one call, 10 MB", &big, hundred.as_str(), 0),
        ("refused with nearest lines, 100k lines", &small, refused, 1),
        ("dedented edit applied, 100k lines", &small, dedent, 0),
    ];
    println!("{:<42} {:>10} {:>8}", "case", "median", "÷ floor");
    println!(
        "{:<42} {:>10} {:>8}",
        "floor: read + str::find + write (in process)",
        ms(floor),
        "1.0"
    );
    println!(
        "{:<42} {:>10} {:>8.1}",
        "process start: nib --version",
        ms(spawn),
        ratio(spawn, floor)
    );
    for (name, text, calls, code) in cases {
        let ws = dir.path().join("ws");
        let _ = fs::remove_dir_all(&ws);
        fs::create_dir_all(&ws).expect("workspace");
        let input = dir.path().join("calls.jsonl");
        fs::write(&input, calls).expect("calls");
        let t = measure(|| {
            fs::write(ws.join("f.txt"), text).expect("reset");
            let _ = fs::remove_dir_all(ws.join(".nib"));
            time(
                Command::new(nib())
                    .args(["apply", "--json", "--root"])
                    .arg(&ws)
                    .arg(&input),
                &[code],
            )
        });
        println!("{name:<42} {:>10} {:>8.1}", ms(t), ratio(t, floor));
    }
    check_dedent(dir.path(), &small, dedent);
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

/// One call, 100 edits spread over the file, in file order.
fn hundred_edits() -> String {
    let edits: Vec<String> = (0..100)
        .map(|k| {
            let i = 1 + 2 * (k * 1_237 + 11);
            format!(
                r#"{{"old": "value_{i} = compute({i}, ", "new": "value_{i} = compute({i} + 1, "}}"#
            )
        })
        .collect();
    format!(r#"{{"path": "f.txt", "edits": [{}]}}"#, edits.join(", "))
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

fn time(cmd: &mut Command, codes: &[i32]) -> Duration {
    let start = Instant::now();
    let out = cmd.output().expect("run nib");
    let took = start.elapsed();
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
    let mut times: Vec<Duration> = (0..RUNS).map(|_| run()).collect();
    times.sort();
    times[RUNS / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}
