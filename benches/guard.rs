//! The guard's scanning parts on the inputs the guard issue sets targets
//! for: compiling the secret rule set, the secret scan of a 64 KiB fs-edit
//! call (20 edits of source text, one fake credential near the end), the
//! ledger check of the same call against 50 known secrets, redaction of a
//! 64 KiB tool output, and the analysis of a ~4 KiB shell command of 50
//! simple commands; and the file sandbox's plan and ruleset for one
//! command.
//!
//! Run with `cargo bench --bench guard` (`NIB_BENCH_ONLY=judge` for the
//! whole-guard rows alone). Prints p50 and p99 per call and the
//! target. Targets: p99 under 5 ms per call, compile under 200 ms. The
//! first row is a floor (a trivial pass over the same text): on a busy
//! machine its p99 is the scheduler's, and so is part of every other p99.

use std::hint::black_box;
use std::time::{Duration, Instant};

use nib::files::Workspace;
use nib::guard::ledger::SecretLedger;
use nib::guard::redact::Redactor;
use nib::guard::secrets::{self, SecretRules, fake};
use nib::guard::shell;
use nib::guard::{Guard, GuardPolicy};
use nib::prim::parse::parse;
use nib::prim::table;

const EDITS: usize = 20;
const PAYLOAD: usize = 64 * 1024;

fn main() {
    let edits = edits();
    // `NIB_BENCH_ONLY=judge`: the whole-guard rows only (for a profiler).
    if std::env::var("NIB_BENCH_ONLY").as_deref() == Ok("judge") {
        judge_rows(&edits, &long_command(), false);
        return;
    }
    let total: usize = edits.iter().map(String::len).sum();
    let whole = edits.concat();
    let command = long_command();
    println!(
        "payload: {EDITS} edits, {:.1} KiB of `new` text; shell command: {:.1} KiB, 50 commands joined by ; and &&, {} simple commands with the pipes\n",
        total as f64 / 1024.0,
        command.len() as f64 / 1024.0,
        shell::analyze(&command, &|_| false).segments.len()
    );
    println!(
        "{:<46} {:>10} {:>10} {:>10}",
        "case", "p50", "p99", "target"
    );

    // A floor measured in the same run: trivial passes over the payload
    // taking about as long as one scan. On a shared machine its p99 shows
    // how much of a p99 is the scheduler (a preempted run), not the guard.
    let floor = measure(300, || {
        for _ in 0..16 {
            for e in black_box(&edits) {
                black_box(e.bytes().filter(|&b| b == b'\n').count());
            }
        }
    });
    row("floor: 16 newline counts over the edits", floor, "");

    let compile = measure(20, || {
        black_box(SecretRules::compile().expect("built-in rules compile"));
    });
    row(
        &format!("compile the rule set ({} rules)", secrets::rules().len()),
        compile,
        "< 200 ms",
    );

    // The fake credential must be found, or the scan measures nothing.
    let hits: usize = edits.iter().map(|e| secrets::scan(e).len()).sum();
    assert_eq!(hits, 1, "the payload holds exactly one fake credential");
    let scan_call = measure(300, || {
        for e in &edits {
            black_box(secrets::scan(e));
        }
    });
    row("secret scan, 20 edits (one call)", scan_call, "< 5 ms");
    let scan_whole = measure(300, || {
        black_box(secrets::scan(&whole));
    });
    row("secret scan, one 64 KiB value", scan_whole, "< 5 ms");

    let mut ledger = SecretLedger::new();
    for (i, kind) in secrets::FAKE_KINDS.iter().cycle().take(50).enumerate() {
        let secret = fake(kind, 1_000 + i as u64).expect("a fake of each kind");
        ledger.add(&secret, "bench");
    }
    ledger.add(&fake("GH", 77).expect("fake"), "bench");
    // A word-like password, as real `.env` files hold (see judge_rows).
    ledger.add("Welcome2024!", "bench");
    let planted: usize = edits.iter().map(|e| ledger.check(e).len()).sum();
    assert!(planted >= 1, "the planted secret is in the ledger");
    black_box(ledger.check("warm up the automaton"));
    let check_call = measure(300, || {
        for e in &edits {
            black_box(ledger.check(e));
        }
    });
    row(
        &format!("ledger check, {} secrets, 20 edits", ledger.len()),
        check_call,
        "< 5 ms",
    );
    // A new secret (a .env read) makes the automata again, at the next
    // check: paid once per secret learnt, by the call after it.
    let mut n = 0u64;
    let rebuilt = measure(20, || {
        let mut grown = ledger.clone();
        n += 1;
        grown.add(&fake("GH", 5_000 + n).expect("fake"), "bench");
        black_box(grown.check("x"));
    });
    row(
        "ledger's automata made again after a new secret",
        rebuilt,
        "",
    );
    let mut session = ledger.clone();
    let observe = measure(300, || {
        for e in &edits {
            black_box(session.observe_sink(e));
        }
    });
    row("ledger observe_sink (chunks), 20 edits", observe, "< 5 ms");

    let guard_call = measure(300, || {
        for e in &edits {
            black_box(secrets::scan(e));
            black_box(ledger.check(e));
        }
    });
    row("scan + ledger check, the whole call", guard_call, "< 5 ms");

    let mut redactor = Redactor::new();
    let redact = measure(300, || {
        black_box(redactor.redact_with(&whole, &ledger));
    });
    row("redact a 64 KiB tool output", redact, "< 5 ms");

    let analyze = measure(300, || {
        black_box(shell::analyze(&command, &|p| p.starts_with(".env")));
    });
    row("shell analyze, 4 KiB, 50 commands", analyze, "< 5 ms");

    judge_rows(&edits, &command, true);
}

/// The whole guard, as the Host calls it: path rules, scan, ledger,
/// handles and taint for the fs-edit call; for the shell call also the
/// command analysis, and (the command commits) git asked for the diff the
/// commit would record and the untracked files `git add -A` stages — two
/// git processes, the dominant cost.
fn judge_rows(edits: &[String], command: &str, sandbox: bool) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file: String = edits
        .iter()
        .map(|e| format!("{}\n", e.lines().next().unwrap_or("")))
        .collect();
    std::fs::write(dir.path().join("lib.rs"), &file).expect("write the file");
    let git_ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .is_ok_and(|s| s.success());
    let ws = Workspace::open(dir.path()).expect("a workspace");
    let guard = Guard::new(GuardPolicy::default());
    for (i, kind) in secrets::FAKE_KINDS.iter().cycle().take(50).enumerate() {
        let secret = fake(kind, 1_000 + i as u64).expect("a fake of each kind");
        guard.observe_protected(".env", &format!("K{i}={secret}\n"));
    }
    // A word-like password too, as real `.env` files hold: the ledger then
    // also reads values spaced out and joined (`ledger/folded.rs`).
    guard.observe_protected(".env", "DB_PASSWORD=Welcome2024!\n");
    let list: Vec<serde_json::Value> = edits
        .iter()
        .map(|e| serde_json::json!({"old": e.lines().next().unwrap_or(""), "new": e}))
        .collect();
    let call = parse(
        &table::FS_EDIT,
        &serde_json::json!({"path": "lib.rs", "edits": list}),
    )
    .expect("the fs-edit call parses");
    assert_eq!(
        guard.judge(&call, &ws).as_str(),
        "security",
        "the planted token is found"
    );
    let edit = measure(100, || {
        black_box(guard.judge(&call, &ws));
    });
    row("Guard::judge, the 20-edit fs-edit call", edit, "< 5 ms");
    // What the model receives of a tool's output: scan, redaction, and
    // every encoded or folded form of a known secret marked.
    let output = edits.concat();
    let observed = measure(100, || {
        black_box(guard.observe_output(&output, false));
    });
    row(
        "Guard::observe_output, 64 KiB of output",
        observed,
        "< 5 ms",
    );

    // Other shapes: a lockfile's worth of integrity hashes (64 KiB of
    // base64 runs, each decoded two codecs deep), and the prose call
    // against a ledger of 250 secrets (a long session).
    let lock_list: Vec<serde_json::Value> = (0..EDITS)
        .map(|e| {
            let mut s = String::new();
            let mut n = e as u64 * 1_000;
            while s.len() < PAYLOAD / EDITS {
                n += 1;
                let digest: Vec<u8> = (0..64u64)
                    .map(|k| (n.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503) >> 7) as u8)
                    .collect();
                s.push_str(&format!(
                    "      \"integrity\": \"sha512-{}\",\n",
                    base64(&digest)
                ));
            }
            serde_json::json!({"old": "", "new": s})
        })
        .collect();
    let lock_call = parse(
        &table::FS_EDIT,
        &serde_json::json!({"path": "package-lock.json", "edits": lock_list}),
    )
    .expect("the lockfile call parses");
    let judged = measure(100, || {
        black_box(guard.judge(&lock_call, &ws));
    });
    row("Guard::judge, 64 KiB of base64 hashes", judged, "< 5 ms");
    // Other people's shapes: a real minified bundle (when the machine has
    // one), and a CSV of numbers (every token a possible character code).
    let minified = ["/usr/share/javascript/jquery/jquery.min.js"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok());
    let numbers: String = (0..PAYLOAD / 24)
        .map(|i| format!("{},{},{},{}\n", i, (i * 37) % 251, (i * 101) % 97, i % 13))
        .collect();
    let shapes = [
        ("64 KiB of a minified bundle (jquery.min.js)", minified),
        ("64 KiB of a CSV of numbers", Some(numbers)),
    ];
    for (name, text) in shapes {
        let Some(text) = text else {
            println!("{name:<46} (not on this machine)");
            continue;
        };
        let cut: String = text.chars().take(PAYLOAD).collect();
        let per = cut.len() / EDITS + 1;
        let list: Vec<serde_json::Value> = cut
            .as_bytes()
            .chunks(per)
            .map(|c| serde_json::json!({"old": "", "new": String::from_utf8_lossy(c)}))
            .collect();
        let call = parse(
            &table::FS_EDIT,
            &serde_json::json!({"path": "vendor.js", "edits": list}),
        )
        .expect("the call parses");
        let judged = measure(100, || {
            black_box(guard.judge(&call, &ws));
        });
        row(&format!("Guard::judge, {name}"), judged, "< 5 ms");
    }
    let crowded = Guard::new(GuardPolicy::default());
    for (i, kind) in secrets::FAKE_KINDS.iter().cycle().take(250).enumerate() {
        let secret = fake(kind, 9_000 + i as u64).expect("a fake of each kind");
        crowded.observe_protected(".env", &format!("K{i}={secret}\n"));
    }
    let judged = measure(100, || {
        black_box(crowded.judge(&call, &ws));
    });
    row(
        "Guard::judge, the fs-edit call, 250 secrets",
        judged,
        "< 5 ms",
    );

    let plain: String = command.replace("git commit", "git log");
    let shell_call = parse(&table::SHELL, &serde_json::json!({"command": plain}))
        .expect("the shell call parses");
    let judged = measure(100, || {
        black_box(guard.judge(&shell_call, &ws));
    });
    row("Guard::judge, the shell call (no commit)", judged, "< 5 ms");
    if git_ok {
        let commit = parse(&table::SHELL, &serde_json::json!({"command": command}))
            .expect("the shell call parses");
        let judged = measure(50, || {
            black_box(guard.judge(&commit, &ws));
        });
        row(
            "Guard::judge, the shell call (commits: git runs)",
            judged,
            "< 10 ms",
        );
    }

    if !sandbox {
        return;
    }
    // The file sandbox's cost per command: the plan (the workspace walked
    // for secret stores, the directories above one listed) and the
    // kernel's ruleset made from it, in a workspace of 200 files with a
    // `.env` at its root.
    for i in 0..200 {
        let sub = dir.path().join(format!("src/m{}", i % 10));
        std::fs::create_dir_all(&sub).expect("a source dir");
        std::fs::write(sub.join(format!("f{i}.rs")), "fn f() {}\n").expect("a source file");
    }
    std::fs::write(dir.path().join(".env"), "TOKEN=x\n").expect("the .env");
    let plan = guard.file_plan(&ws, None, &[]);
    let planned = measure(100, || {
        black_box(guard.file_plan(&ws, None, &[]));
    });
    row(
        &format!(
            "file sandbox plan ({} grants, {} hidden)",
            plan.grants.len(),
            plan.hidden.len()
        ),
        planned,
        "",
    );
    if nib::prim::tools::landlock::available() {
        let built = measure(100, || {
            black_box(nib::prim::tools::landlock::build(&plan).expect("a ruleset"));
        });
        row("file sandbox ruleset from the plan (kernel)", built, "");
    }
    sandbox_rows(&guard, &ws, "a workspace of 200 files", true);
    // Another shape: a monorepo's size, where the walk for secret stores
    // and the watch on what commands write have the most to do.
    let big = tempfile::tempdir().expect("a temp dir");
    for d in 0..2_500 {
        let sub = big.path().join(format!("pkg{}/src/m{}", d / 50, d % 50));
        std::fs::create_dir_all(&sub).expect("a source dir");
        for f in 0..20 {
            std::fs::write(sub.join(format!("f{f}.ts")), "export const f = 1;\n")
                .expect("a source file");
        }
    }
    std::fs::write(big.path().join("pkg7/.env"), "TOKEN=Zq8vL2mWx9RtK4pN7cYb\n").expect("the .env");
    // A real tree is older than git's "racily clean" window: a directory
    // changed in the last two seconds is read again by every walk.
    std::thread::sleep(Duration::from_secs(3));
    let big_ws = Workspace::open(big.path()).expect("a workspace");
    let big_guard = Guard::new(GuardPolicy::default());
    big_guard.learn_startup_secrets(&big_ws, &[]);
    sandbox_rows(
        &big_guard,
        &big_ws,
        "a workspace of 50,000 files in 2,500 directories",
        false,
    );
}

/// A sandboxed command's start-up beside an unsandboxed one, in one run,
/// interleaved so load hits both alike: `date +%s%N` run bare (no
/// namespace), as the session runs it (network, mount and pid
/// namespaces, the environment allowlist, Landlock: `spawn.rs`'s clone),
/// the plans made per command included, and, for reference, in a network
/// namespace entered through std's `pre_exec` (a fork of this process).
/// Start-up is the time from before the plans to the instant the command
/// reads the clock (what it prints); the whole run also counts the
/// namespaces' teardown, which the kernel does before `wait` returns.
/// The plans include the look at run-later files before the command;
/// the whole run, the undoing of them and the read-back of written files
/// after. Measured twice: as the bench process is, and holding 1 GiB more
/// (a long session's nib; a fork copies page tables in proportion), or,
/// in the big workspace, with a new file made before each command (the
/// walk then reads that directory again).
/// Target: start-up p50 difference at most 5 ms.
fn sandbox_rows(guard: &Guard, ws: &Workspace, shape: &str, with_ballast: bool) {
    use nib::prim::tools::{Confinement, autorun, mountns, shell_cancellable, spawn, written};
    if !spawn::available() {
        println!("(no mount namespaces here: the sandboxed start-up is not measured)");
        return;
    }
    println!("\n{shape}:");
    // What commands write, watched as a session does.
    let t = Instant::now();
    let mut watch = written::Written::new(ws.root()).expect("inotify");
    println!(
        "{:<46} {:>10}",
        "watching the workspace (once a session)",
        ms(t.elapsed())
    );
    let dirs = mountns::SessionDirs::create().expect("the session's dirs");
    let env = nib::guard::environment::child_env(std::env::vars_os(), &[]);
    let now_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970")
            .as_nanos()
    };
    let started_at = |out: &str, before: u128| -> Duration {
        let printed: u128 = out
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("date printed nanoseconds");
        Duration::from_nanos(printed.saturating_sub(before) as u64)
    };
    let p = |v: &mut Vec<Duration>, q: f64| {
        v.sort();
        v[((v.len() - 1) as f64 * q) as usize]
    };
    let mut ballast: Vec<u8> = Vec::new();
    // Measured as nib is, holding 1 GiB more (small workspace), and with
    // a new file made in a directory before each command, as the last
    // command's write would (big workspace: the walk reads it again).
    let cases: &[(&str, bool)] = if with_ballast {
        &[("", false), (", nib holding 1 GiB more", false)]
    } else {
        &[("", false), (", a file made before each", true)]
    };
    for (round, &(held, making)) in cases.iter().enumerate() {
        if with_ballast && round == 1 {
            // Touched, so every page is mapped (and would be copied by a fork).
            ballast = vec![1u8; 1 << 30];
            black_box(&ballast);
        }
        let (mut bare, mut boxed, mut forked) = (Vec::new(), Vec::new(), Vec::new());
        let (mut bare_run, mut boxed_run) = (Vec::new(), Vec::new());
        let mut planning = Vec::new();
        for i in 0..200 {
            if making {
                let dir = ws
                    .root()
                    .join(format!("pkg{}/src/m{}", i % 50, (i * 7) % 50));
                std::fs::write(dir.join(format!("new{i}.ts")), "export {};\n").expect("a new file");
            }
            let before = now_ns();
            let t = Instant::now();
            let out = shell_cancellable(
                ws,
                "date +%s%N",
                10,
                Confinement {
                    network: true,
                    ..Confinement::default()
                },
                None,
            )
            .expect("a bare command runs");
            bare_run.push(t.elapsed());
            bare.push(started_at(&out, before));
            let before = now_ns();
            let t = Instant::now();
            watch.start();
            let mounts = guard.mount_plan(ws, dirs.path(), watch.changes().as_ref());
            // The run-later files' look before the command, as the session
            // makes it.
            let seen = guard.run_later_seen(ws);
            let auto_run = autorun::snapshot(ws.root(), seen.as_deref());
            let files = guard.file_plan(ws, Some(&mounts), &dirs.writable());
            let prepared =
                mountns::prepare(&mounts, &dirs, Some(ws.root())).expect("the plan prepares");
            planning.push(t.elapsed());
            let out = shell_cancellable(
                ws,
                "date +%s%N",
                10,
                Confinement {
                    network: false,
                    files: Some(&files),
                    mounts: Some(prepared),
                    env: Some(&env),
                },
                None,
            )
            .expect("a sandboxed command runs");
            // What it wrote: run-later files undone, copies of secrets
            // read back.
            let wrote = watch.finish();
            black_box(auto_run.undo(ws.root(), Some(&wrote)));
            black_box(guard.secrets_written(ws, &wrote));
            boxed_run.push(t.elapsed());
            boxed.push(started_at(&out, before));
            let before = now_ns();
            let out = shell_cancellable(ws, "date +%s%N", 10, Confinement::default(), None)
                .expect("a command without network runs");
            forked.push(started_at(&out, before));
        }
        let (b50, b99) = (p(&mut bare, 0.5), p(&mut bare, 0.99));
        let (s50, s99) = (p(&mut boxed, 0.5), p(&mut boxed, 0.99));
        row(&format!("command start-up, bare{held}"), (b50, b99), "");
        row(
            "command start-up, sandboxed, plans included",
            (s50, s99),
            "",
        );
        row(
            "  of which the plans (mounts, Landlock, run-later look)",
            (p(&mut planning, 0.5), p(&mut planning, 0.99)),
            "",
        );
        println!(
            "{:<46} {:>10} {:>10} {:>10}",
            "sandbox's added start-up (p50 difference)",
            ms(s50.saturating_sub(b50)),
            "",
            "<= 5 ms"
        );
        row(
            "reference: network namespace by fork (pre_exec)",
            (p(&mut forked, 0.5), p(&mut forked, 0.99)),
            "",
        );
        row(
            "whole run of the command, bare",
            (p(&mut bare_run, 0.5), p(&mut bare_run, 0.99)),
            "",
        );
        row(
            "whole run, sandboxed (teardown, written files)",
            (p(&mut boxed_run, 0.5), p(&mut boxed_run, 0.99)),
            "",
        );
    }
    drop(ballast);
}

/// 20 edits of realistic source text, 64 KiB together, with words that
/// switch on the generic rules' prefilter (key, token, password, ://) and
/// one fake GitHub token in the last edit.
fn edits() -> Vec<String> {
    let per_edit = PAYLOAD / EDITS;
    let mut edits = Vec::with_capacity(EDITS);
    let mut n = 0usize;
    for e in 0..EDITS {
        let mut s = String::with_capacity(per_edit + 256);
        while s.len() < per_edit {
            n += 1;
            s.push_str(&match n % 8 {
                0 => format!("    let key_{n} = cache.get(&token_ids[{n}]).cloned();\n"),
                1 => format!("    // See https://docs.rs/regex/1.10.{n}/regex/ for the syntax.\n"),
                2 => format!(
                    "    if password_hash_{n}.len() < MIN_PASSWORD_LEN {{ return Err(Error::Weak({n})); }}\n"
                ),
                3 => format!("    config.insert(\"api_timeout_{n}\", \"{}\");\n", n * 31),
                4 => format!("    let auth = Auth::new(user_{n}, options.retry_limit);\n"),
                5 => format!("    total += compute(value_{n}, &secret_store).await?;\n"),
                6 => format!(
                    "    assert_eq!(checksum({n}), \"{:016x}{:016x}\");\n",
                    n * 7919,
                    n * 104_729
                ),
                _ => format!("    tracing::debug!(request_id = {n}, \"handled\");\n"),
            });
        }
        if e == EDITS - 1 {
            let token = fake("GH", 77).expect("a fake GitHub token");
            s.push_str(&format!("    let client = Client::new(\"{token}\");\n"));
        }
        edits.push(s);
    }
    edits
}

/// A ~4 KiB command line of 50 simple commands, plain and not.
fn long_command() -> String {
    let parts = [
        "cargo test -p nib --lib guard::secrets -- --nocapture",
        "grep -rn 'fn scan' src | head -20",
        "git add -A",
        "git commit -m \"guard: scan each edit's new text before writing it to disk\"",
        "python3 -m pytest tests/test_guard.py -k 'ledger and not slow' -q",
        "echo \"$HOME/.cache/nib\" && ls -la \"$HOME/.cache\"",
        "find . -name '*.rs' -not -path './target/*' | xargs wc -l | sort -n | tail -5",
        "RUST_LOG=debug timeout 120 cargo run --release -- apply --json calls.jsonl > out.json 2>&1",
        "sed -n '1,80p' src/guard/secrets.rs | grep -v '^//'",
        "curl -sS https://example.com/api/v1/status | python3 -m json.tool",
    ];
    let mut command = String::new();
    for i in 0..50 {
        if i > 0 {
            command.push_str(if i % 3 == 0 { " && " } else { "; " });
        }
        command.push_str(parts[i % parts.len()]);
        command.push_str(&format!(" >> logs/step-{i:02}.log"));
    }
    command
}

fn measure(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f(); // warm up: first-use compiles and allocations
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    let p50 = times[runs / 2];
    let p99 = times[(runs * 99 / 100).min(runs - 1)];
    (p50, p99)
}

fn row(name: &str, (p50, p99): (Duration, Duration), target: &str) {
    println!("{name:<46} {:>10} {:>10} {target:>10}", ms(p50), ms(p99));
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// Standard base64 with padding, as a lockfile's integrity field holds.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (u32::from(b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
