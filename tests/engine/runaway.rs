//! A runaway strategy is stopped at the deadline and the engine survives.

use std::time::{Duration, Instant};

use serde_json::json;

use super::support::{engine, engine_with, fail, run, scratch};
use crate::engine::ErrorKind;

const DEADLINE: Duration = Duration::from_millis(300);

#[test]
fn a_runaway_loop_is_stopped_and_the_engine_carries_on() {
    let (mut e, calls) = engine_with(&[], Some(DEADLINE));
    // A quick run first: steel's own interrupt handler misses the next
    // deadline after one.
    assert_eq!(run(&mut e, "(+ 1 2)"), json!(3));

    let t = Instant::now();
    let err = e
        .run_source("spin.scm", "(define (spin) (let loop () (loop)))\n(spin)")
        .unwrap_err();
    let took = t.elapsed();
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(
        err.to_string()
            .starts_with("the strategy ran longer than 0.3 s and was stopped")
            || err.message() == "the strategy ran longer than 0.3 s and was stopped",
        "{err}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");

    // The loop from the issue, as a whole program.
    let t = Instant::now();
    let err = e
        .run_source("loop.scm", "(let loop () (loop))")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(t.elapsed() < Duration::from_secs(20));

    // The same engine: a normal run, a normal call, a primitive.
    assert_eq!(run(&mut e, "(+ 40 2)"), json!(42));
    run(&mut e, "(define (ok x) (tool-text (fs-read x)))");
    assert_eq!(
        e.call("ok", vec![json!("a")]).unwrap(),
        json!("fs-read done")
    );
    assert_eq!(calls.take().len(), 1);

    // A runaway through `call`, allocating as it goes, then a normal call.
    run(
        &mut e,
        "(define (grow) (let loop ([xs '()]) (loop (cons 1 (if (> (length xs) 1000) '() xs)))))",
    );
    let t = Instant::now();
    let err = e.call("grow", vec![]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(
        e.call("ok", vec![json!("b")]).unwrap(),
        json!("fs-read done")
    );

    // Several quick calls in a row never trip the deadline.
    let t = Instant::now();
    while t.elapsed() < DEADLINE * 2 {
        assert_eq!(
            e.call("ok", vec![json!("c")]).unwrap(),
            json!("fs-read done")
        );
    }
}

#[test]
fn a_long_sleep_ends_at_the_deadline() {
    let (mut e, _) = engine_with(&[], Some(DEADLINE));
    let t = Instant::now();
    let err = e
        .run_source("sleep.scm", "(time/sleep-ms 60000) 1")
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    // Short sleeps are fine.
    assert_eq!(run(&mut e, "(time/sleep-ms 5) 7"), json!(7));
}

#[test]
fn deeply_nested_data_is_an_error_not_an_abort() {
    let (mut engine, _) = engine();
    for depth in [10_000, 50_000] {
        let src = format!("(quote {}1{})", "(".repeat(depth), ")".repeat(depth));
        let err = fail(&mut engine, &src);
        assert!(err.to_string().contains("nest more than"), "{err}");
    }
    // A required module is checked before steel reads it, too.
    let dir = scratch(&[(
        "deep.scm",
        &format!(
            "(provide x)\n(define x '{}1{})\n",
            "(".repeat(20_000),
            ")".repeat(20_000)
        ),
    )]);
    let (mut engine2, _) = engine_with(&[dir.path()], None);
    let err = fail(&mut engine2, "(require \"deep.scm\")");
    assert!(err.to_string().contains("nest more than"), "{err}");
    assert_eq!(run(&mut engine, "(+ 1 2)"), serde_json::json!(3));
}

#[test]
fn huge_allocations_and_numbers_are_refused_not_aborts() {
    let (mut engine, _) = engine_with(&[], Some(Duration::from_secs(5)));
    for src in [
        "(make-vector 100000000000 0)",
        "(make-vector 100000000000)",
        "(make-string 100000000000 #\\a)",
    ] {
        let err = fail(&mut engine, src);
        assert!(
            err.to_string()
                .contains("more than a strategy may allocate"),
            "{src}: {err}"
        );
        // No place inside nib's own sources is shown.
        let shown = err.to_string();
        assert!(!shown.contains("nib/limits"), "{src}: {shown}");
    }
    let start = Instant::now();
    let err = fail(&mut engine, "(expt 2 100000000)");
    assert!(err.to_string().contains("digits"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(5));
    // Ordinary sizes still work, in a required module too.
    assert_eq!(
        run(
            &mut engine,
            "(list (vector-length (make-vector 3 0)) (make-string 2 #\\a) (expt 2 10))"
        ),
        json!([3, "aa", 1024])
    );
    let dir = scratch(&[(
        "big.scm",
        "(provide big)\n(define (big) (make-vector 100000000000 0))\n",
    )]);
    let (mut engine2, _) = engine_with(&[dir.path()], None);
    let err = fail(&mut engine2, "(require \"big.scm\") (big)");
    assert!(
        err.to_string()
            .contains("more than a strategy may allocate"),
        "{err}"
    );
}

/// Programs that once took the process down (a stack overflow in the
/// reader, an allocation failure, a primitive running past the deadline)
/// and generated variations: each must end in a value or an error, and
/// the engine must carry on. How many ran is printed (`--nocapture`).
#[test]
fn no_program_aborts_the_process() {
    let (mut engine, _) = engine_with(&[], Some(Duration::from_secs(5)));
    let mut programs: Vec<String> = Vec::new();
    // Nesting: every prefix and bracket, alone and mixed, at three depths.
    for depth in [1_000, 10_000, 100_000] {
        for open in [
            "'", "`", ",", ",@", "#'", "#`", "'(", "(", "[", "#(", "`(,", "'#(",
        ] {
            programs.push(format!("{}1", open.repeat(depth)));
        }
        programs.push(format!(
            "(read (open-input-string (string-append (make-string {depth} #\\() \"1\")))"
        ));
        programs.push(format!(
            "(read (open-input-string (make-string {depth} (string-ref \"'\" 0))))"
        ));
    }
    // Random soup of brackets, quotes, strings and comments.
    let alphabet: Vec<char> = "()[]'`,@# \"a1;\n\\|".chars().collect();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..150 {
        let text: String = (0..4000)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                alphabet[(seed >> 33) as usize % alphabet.len()]
            })
            .collect();
        programs.push(text);
    }
    // Allocation, all at once and grown over many steps.
    for src in [
        "(make-vector 100000000000 0)",
        "(make-string 100000000000 #\\a)",
        "(range 0 1000000000)",
        "(range -1000000000 1000000000)",
        "(apply make-vector (list 100000000000 0))",
        "(define mv make-vector) (mv 100000000000 1)",
        "(let loop ([s \"xxxxxxxxxxxxxxxx\"]) (loop (string-append s s)))",
        "(define v (box '())) (let loop ([i 0]) (set-box! v (cons (make-vector 1000000 i) (unbox v))) (loop (+ i 1)))",
    ] {
        programs.push(src.to_string());
    }
    // Bignums.
    for src in [
        "(expt 7 100000000)",
        "(expt 2 (expt 2 40))",
        "(expt -3 100000000)",
        "(arithmetic-shift 1 100000000000)",
        "(arithmetic-shift 3 (expt 2 70))",
        "(let loop ([x 2]) (loop (* x x)))",
        "(number->string (expt 7 300000))",
    ] {
        programs.push(src.to_string());
    }
    // steel's internal names, which once skipped the limits.
    for name in [
        "make-vector",
        "make-string",
        "range",
        "expt",
        "arithmetic-shift",
    ] {
        programs.push(format!("(#%prim.{name} 100000000000 1)"));
    }
    // The same, from inside a required module (steel folds constant
    // calls there at compile time).
    let dir = scratch(&[(
        "m.scm",
        "(provide big big-shift)\n(define (big) (expt 7 100000000))\n(define (big-shift) (arithmetic-shift 1 100000000000))\n",
    )]);
    let (mut in_module, _) = engine_with(&[dir.path()], Some(Duration::from_secs(5)));
    let err = fail(&mut in_module, "(require \"m.scm\") (big)");
    assert!(err.to_string().contains("digits"), "{err}");
    let err = fail(&mut in_module, "(big-shift)");
    assert!(err.to_string().contains("digits"), "{err}");

    let mut errors = 0;
    for src in &programs {
        if engine.run_source("fuzz.scm", src).is_err() {
            errors += 1;
        }
        assert_eq!(run(&mut engine, "(+ 1 2)"), json!(3), "after {src:.80}");
    }
    println!(
        "{} programs ran without aborting the process ({} ended in an error)",
        programs.len() + 2,
        errors
    );
    assert!(errors > programs.len() / 2);
}

/// The terminal client's Esc sets the run's cancel flag: Scheme that is
/// looping stops at its next instruction, and the engine carries on.
#[test]
fn a_set_cancel_flag_stops_looping_scheme() {
    let (mut engine, _) = engine_with(&[], Some(Duration::from_secs(60)));
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    engine.watch_cancel(std::sync::Arc::clone(&flag));
    let setter = std::sync::Arc::clone(&flag);
    let esc = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        setter.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let err = fail(&mut engine, "(define (spin) (spin)) (spin)");
    esc.join().unwrap();
    assert!(err.to_string().contains("interrupted by the user"), "{err}");
    flag.store(false, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(run(&mut engine, "(+ 1 2)"), json!(3));
}

/// Each engine counts its own memory: a runaway on one thread grows by
/// 256 MiB and is stopped by its budget while an engine on another
/// thread, whose budget is 64 MiB, is in the middle of its run; that one
/// finishes (a process-wide count would have stopped it).
#[test]
fn a_runaway_engine_does_not_stop_another_running_beside_it() {
    use std::sync::{Arc, Barrier, Mutex, mpsc};
    let start = Arc::new(Barrier::new(2));
    let (hog_done, hog_done_rx) = mpsc::channel::<()>();
    let runaway = {
        let start = Arc::clone(&start);
        std::thread::spawn(move || {
            let (mut e, _) = engine_with(&[], Some(Duration::from_secs(300)));
            e.set_memory_budget(256 << 20);
            start.wait();
            let err = e
                .run_source(
                    "hog.scm",
                    "(define v (box '()))\n\
                     (let loop ([i 0]) (set-box! v (cons (make-vector 100000 i) (unbox v))) (loop (+ i 1)))",
                )
                .unwrap_err();
            // The engine carries on after its budget stopped it.
            let after = e.run_source("after.scm", "(+ 1 2)").map_err(|e| e.to_string());
            let _ = hog_done.send(());
            (err, after)
        })
    };
    let normal = {
        let start = Arc::clone(&start);
        std::thread::spawn(move || {
            let (mut e, _) = engine_with(&[], Some(Duration::from_secs(300)));
            e.set_memory_budget(64 << 20);
            // Blocks the run until the other engine has grown and been
            // stopped.
            let rx = Mutex::new(hog_done_rx);
            e.register("wait-for-the-other", move |_| {
                let got = rx.lock().map_err(|e| e.to_string())?.recv().is_ok();
                Ok(serde_json::Value::Bool(got))
            });
            start.wait();
            // Allocates and frees more than its budget over the run,
            // holding little at any time.
            e.run_source(
                "churn.scm",
                "(define (churn n) (let loop ([i 0] [t 0]) (if (= i n) t (loop (+ i 1) (+ t (length (range 0 10000)))))))\n\
                 (define a (churn 400))\n\
                 (define waited (wait-for-the-other))\n\
                 (list waited (+ a (churn 400)))",
            )
        })
    };
    let (err, after) = runaway.join().unwrap();
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(
        err.to_string().contains("more than 256 MiB in one run"),
        "{err}"
    );
    assert_eq!(after.unwrap(), json!(3));
    assert_eq!(normal.join().unwrap().unwrap(), json!([true, 8_000_000]));
}

/// The budget holds without a deadline too, and per run: the next run
/// starts with the whole budget.
#[test]
fn the_memory_budget_stops_growth_without_a_deadline() {
    let (mut e, _) = engine_with(&[], None);
    e.set_memory_budget(32 << 20);
    let err = fail(
        &mut e,
        "(let loop ([s \"xxxxxxxxxxxxxxxx\"]) (loop (string-append s s)))",
    );
    assert_eq!(err.kind(), ErrorKind::Runaway, "{err}");
    assert!(err.to_string().contains("memory budget"), "{err}");
    // Under the budget: a vector of 1 million, twice in a row.
    for _ in 0..2 {
        assert_eq!(
            run(&mut e, "(vector-length (make-vector 1000000 0))"),
            json!(1_000_000)
        );
    }
}

/// Exact arithmetic has a digit cap, however it is reached: a power, a
/// shift, a loop of squarings (in a module, at top level, through
/// `apply`), fractions that grow under `+` and `/`, a long numeral.
#[test]
fn exact_numbers_past_the_digit_cap_are_refused() {
    let dir = scratch(&[(
        "sq.scm",
        "(provide sq-loop frac-loop)\n\
         (define (sq-loop) (let loop ([x 2]) (loop (* x x))))\n\
         (define (frac-loop) (let loop ([x 1/3]) (loop (+ x (/ 1 x)))))\n",
    )]);
    let (mut e, _) = engine_with(&[dir.path()], Some(Duration::from_secs(60)));
    let refused = [
        "(expt 10 100000000)",
        "(expt 2/3 100000000)",
        "(arithmetic-shift 1 100000000000)",
        "(let loop ([x 2]) (loop (* x x)))",
        "(define (f x) (* x x)) (let loop ([x 2]) (loop (f x)))",
        "(let loop ([x 2]) (loop (apply * (list x x))))",
        "(let loop ([x 3]) (loop (square x)))",
        "(let loop ([x 1/3]) (loop (+ x (/ 1 x))))",
        "(let loop ([x 7/3]) (loop (/ x (/ 1 x))))",
        "(require \"sq.scm\") (sq-loop)",
        "(frac-loop)",
        "(string->number (make-string 1000000 #\\7))",
    ];
    for src in refused {
        let err = fail(&mut e, src);
        assert!(
            err.to_string().contains("300000 digits (nib's cap on exact numbers)"),
            "{src}: {err}"
        );
    }
    // Numbers under the cap still work, in every form.
    assert_eq!(
        run(
            &mut e,
            "(list (* 6 7) (- 50 8) (+ 40 2) (/ 84 2) (square 4) (expt 2 10) (string->number \"42\") (- 5))"
        ),
        json!([42, 42, 42, 42, 16, 1024, 42, -5])
    );
    assert_eq!(
        run(&mut e, "(string-length (number->string (expt 7 100000)))"),
        json!(84510)
    );
    assert_eq!(run(&mut e, "(* 1.5 2)"), json!(3.0));
}
