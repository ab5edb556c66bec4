//! Engine costs: creating a sandboxed engine with the prelude, a primitive
//! called from Scheme (argument conversion → HostFn → JSON → Scheme), and
//! a call from Rust into Scheme. Prints medians.
//!
//! Run with `cargo bench --bench engine`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nib::engine::{Engine, EngineOptions, HostFn};
use nib::prim::table::ALL;
use serde_json::json;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn host() -> HostFn {
    Arc::new(|call| {
        black_box(&call);
        Ok(json!({"ok": true, "text": "x", "decision": "allow", "refused": false}))
    })
}

fn new_engine() -> Engine {
    let opts = EngineOptions {
        strategy_dirs: vec![],
        deadline: Some(Duration::from_secs(60)),
    };
    match Engine::new(&ALL, host(), opts) {
        Ok(e) => e,
        Err(e) => panic!("engine: {e}"),
    }
}

fn run(e: &mut Engine, src: &str) {
    if let Err(err) = e.run_source("bench.scm", src) {
        panic!("{src}: {err}");
    }
}

/// Median time per iteration of `(name n)`, a Scheme loop.
fn per_iteration(e: &mut Engine, name: &str, n: usize, rounds: usize) -> Duration {
    let times: Vec<Duration> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            if let Err(err) = e.call(name, vec![json!(n)]) {
                panic!("{name}: {err}");
            }
            t.elapsed() / n as u32
        })
        .collect();
    median(times)
}

fn main() {
    // Creation. The first engine in a process pays one-time setup.
    let t = Instant::now();
    let mut e = new_engine();
    let first = t.elapsed();
    let creation: Vec<Duration> = (0..10)
        .map(|_| {
            let t = Instant::now();
            black_box(new_engine());
            t.elapsed()
        })
        .collect();
    let creation = median(creation);
    // steel's own sandboxed engine, for comparison: the rest is nib's
    // hardening, primitives and prelude.
    let raw: Vec<Duration> = (0..10)
        .map(|_| {
            let t = Instant::now();
            black_box(steel::steel_vm::engine::Engine::new_sandboxed());
            t.elapsed()
        })
        .collect();
    let raw = median(raw);

    run(
        &mut e,
        r#"
        (define (loop-noop n) (let loop ([i 0]) (when (< i n) (loop (+ i 1)))))
        (define (scheme-fn x) x)
        (define (loop-scheme n) (let loop ([i 0]) (when (< i n) (scheme-fn "a.rs") (loop (+ i 1)))))
        (define (loop-read n) (let loop ([i 0]) (when (< i n) (fs-read "a.rs" 1 20) (loop (+ i 1)))))
        (define (loop-status n) (let loop ([i 0]) (when (< i n) (git-status) (loop (+ i 1)))))
        (define edits (list (list (cons "old" "x = 1") (cons "new" "x = 2"))
                            (list (cons "old" "y = 1") (cons "new" "y = 2") (cons "replace_all" #t))))
        (define (loop-edit n) (let loop ([i 0]) (when (< i n) (fs-edit "a.rs" "" "" #f edits) (loop (+ i 1)))))
        (define (noop) 1)
        "#,
    );
    let n = 20_000;
    let noop = per_iteration(&mut e, "loop-noop", n, 7);
    let scheme = per_iteration(&mut e, "loop-scheme", n, 7);
    let read = per_iteration(&mut e, "loop-read", n, 7);
    let status = per_iteration(&mut e, "loop-status", n, 7);
    let edit = per_iteration(&mut e, "loop-edit", n, 7);

    let calls: Vec<Duration> = (0..2000)
        .map(|_| {
            let t = Instant::now();
            black_box(e.call("noop", vec![]).ok());
            t.elapsed()
        })
        .collect();
    let call = median(calls);
    let big = json!({"messages": (0..200).map(|i| json!({"role": "user", "content": "x".repeat(500), "i": i})).collect::<Vec<_>>()});
    run(&mut e, "(define (id x) x)");
    let round_trips: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            black_box(e.call("id", vec![big.clone()]).ok());
            t.elapsed()
        })
        .collect();
    let round_trip = median(round_trips);

    println!("engine: first Engine::new (one-time setup included) {first:?}");
    println!("engine: Engine::new with 11 primitives + prelude (median of 10) {creation:?}");
    println!("engine: steel Engine::new_sandboxed alone (median of 10) {raw:?}");
    println!("engine: Scheme loop iteration, empty {noop:?}");
    println!("engine: Scheme loop iteration calling a Scheme function {scheme:?}");
    println!(
        "engine: Scheme loop iteration calling (fs-read \"a.rs\" 1 20) {read:?}  (primitive overhead ~{:?})",
        read.saturating_sub(noop)
    );
    println!(
        "engine: Scheme loop iteration calling (git-status) {status:?}  (~{:?})",
        status.saturating_sub(noop)
    );
    println!(
        "engine: Scheme loop iteration calling fs-edit with 2 edits {edit:?}  (~{:?})",
        edit.saturating_sub(noop)
    );
    println!("engine: Engine::call of a 0-argument Scheme function (median) {call:?}");
    println!(
        "engine: Engine::call round trip of a {} KB JSON value (median) {round_trip:?}",
        big.to_string().len() / 1024
    );
}
