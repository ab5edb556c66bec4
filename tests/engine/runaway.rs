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
            let after = e
                .run_source("after.scm", "(+ 1 2)")
                .map_err(|e| e.to_string());
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
        "(expt 2 -100000000)",
        "(expt 2/3 -100000000)",
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
    // A complex number with a NaN part made steel's sqrt recurse until
    // the stack overflowed.
    let err = fail(&mut e, "(sqrt (sqrt (- (expt 10 400))))");
    assert!(err.to_string().contains("not a finite number"), "{err}");
    for src in refused {
        let err = fail(&mut e, src);
        let shown = err.to_string();
        assert!(
            shown.contains("300000 digits (nib's cap on exact numbers)")
                || shown.contains("30000 digits (nib's cap on exact fractions)"),
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

/// Generated programs of the classes the limits cover, run in one engine:
/// exact arithmetic of every operator over big, fractional, negative,
/// complex and inexact operands, alone and in loops; allocation that only
/// the memory budget stops; and every builtin steel gives a strategy,
/// plus nib's primitives, called directly with odd arguments. Each must
/// end in a value or an error, and the engine must carry on. How many
/// ran is printed (`--nocapture`).
#[test]
fn generated_arithmetic_allocation_and_primitive_calls_never_abort() {
    let mut programs: Vec<String> = Vec::new();

    // Arithmetic: every operator on every pair of operands, and each
    // operator iterated on its own result.
    let operands = [
        "(expt 7 100000)",
        "(expt 10 299990)",
        "(- (expt 2 900000))",
        "(/ 1 (expt 3 10000))",
        "1/3",
        "(expt 2 -1000)",
        "-1",
        "0",
        "2.5",
        "(make-rectangular (expt 10 1000) 3)",
        "100000000000",
        "(string->number (make-string 100000 #\\9))",
    ];
    let binary = [
        "*",
        "/",
        "+",
        "-",
        "expt",
        "arithmetic-shift",
        "quotient",
        "remainder",
        "modulo",
        "bitwise-and",
        "bitwise-xor",
        "max",
        "=",
        "<",
    ];
    let unary = [
        "square",
        "exact-integer-sqrt",
        "sqrt",
        "exact",
        "inexact",
        "abs",
        "number->string",
        "numerator",
        "denominator",
        "bitwise-not",
        "exp",
        "log",
        "floor",
        "round",
    ];
    // The operands are made once per engine (a 250,000-digit numeral
    // takes a while to read); the programs name them.
    let definitions: Vec<String> = operands
        .iter()
        .enumerate()
        .map(|(i, a)| format!("(define fz{i} {a}) #t"))
        .collect();
    let fresh = || {
        let (mut engine, _) = engine_with(&[], Some(Duration::from_secs(10)));
        engine.set_memory_budget(256 << 20);
        for d in &definitions {
            run(&mut engine, d);
        }
        engine
    };
    let mut engine = fresh();
    let operands: Vec<String> = (0..operands.len()).map(|i| format!("fz{i}")).collect();
    let operands: Vec<&str> = operands.iter().map(String::as_str).collect();
    for op in binary {
        for a in &operands {
            for b in &operands {
                programs.push(format!("({op} {a} {b})"));
            }
            programs.push(format!(
                "(let loop ([x {a}] [i 0]) (if (= i 40) (number? x) (loop ({op} x x) (+ i 1))))"
            ));
        }
    }
    for op in unary {
        for a in &operands {
            programs.push(format!("({op} {a})"));
            programs.push(format!(
                "(let loop ([x {a}] [i 0]) (if (= i 40) (number? x) (loop ({op} x) (+ i 1))))"
            ));
        }
    }
    for a in &operands {
        for src in [
            "(apply * (list X X X X))",
            "(foldl * 1 (list X X X X X X))",
            "(map * (list X X) (list X X))",
            "(string->number (string-append (number->string X) (number->string X)))",
            "(expt X 100000000)",
            "(expt X -100000000)",
            "(arithmetic-shift X 100000000000)",
            "(arithmetic-shift X -100000000000)",
        ] {
            programs.push(src.replace('X', a));
        }
    }

    // Allocation that only the memory budget stops.
    for src in [
        "(let loop ([s \"x\"]) (loop (string-append s s)))",
        "(let loop ([v (vector 1)]) (loop (vector-append v v)))",
        "(let loop ([h (hash)] [i 0]) (loop (hash-insert h i (make-string 1000 #\\a)) (+ i 1)))",
        "(let loop ([xs '()] [i 0]) (loop (cons (make-string 1000 #\\a) xs) (+ i 1)))",
        "(apply string-append (map (lambda (i) (make-string 100000 #\\a)) (range 0 100000)))",
        "(let loop ([xs (list 1)]) (loop (append xs xs)))",
        "(vector->list (make-vector 10000000 0))",
        "(list->string (map (lambda (i) #\\a) (range 0 10000000)))",
        "(let loop ([l (range 0 1000)] [acc '()]) (loop l (cons (list->vector l) acc)))",
        "(let loop ([s (make-string 10000000 #\\a)] [acc '()]) (loop s (cons (string-append s \"b\") acc)))",
    ] {
        programs.push(src.to_string());
    }

    // Every builtin of steel's base module, and nib's primitives, called
    // directly (through `apply`, so a wrong argument count is a runtime
    // error, not a compile error) with odd arguments, each call caught.
    let names = std::thread::spawn(|| {
        let vm = steel::steel_vm::engine::Engine::new_sandboxed();
        vm.builtin_modules()
            .get("steel/base")
            .map(|m| m.names())
            .unwrap_or_default()
    })
    .join()
    .unwrap();
    assert!(names.len() > 300, "{}", names.len());
    let args = [
        "'()",
        "'(1)",
        "'(-1)",
        "'(100000000000)",
        "'(\"x\")",
        "'(#f)",
        "(list (list 1 2))",
        "'(1 2)",
        "(list \"a\" 100000000000)",
        "(list (lambda (x) x) '(1 2))",
        "'(100000000000 100000000000)",
        "(list (make-string 1000 #\\()  1)",
        "(list (expt 7 1000) -100000000000)",
    ];
    let mut called = 0;
    for name in names
        .iter()
        .map(String::as_str)
        .chain(nib::prim::table::ALL.iter().map(|d| d.name))
    {
        // Names only steel's expander uses, and syntax.
        if name.starts_with('#') || name.starts_with('%') || name.contains(' ') {
            continue;
        }
        let calls: Vec<String> = args
            .iter()
            .map(|a| format!("(with-handler (lambda (e) 'error) (apply {name} {a}))"))
            .collect();
        called += calls.len();
        programs.push(format!("(list {})", calls.join("\n")));
    }

    let mut errors = 0;
    let mut panics = 0;
    for src in &programs {
        match engine.run_source("fuzz.scm", src) {
            Ok(_) => {}
            // steel panicked: the error says so, and the engine refuses
            // to go on; a new one takes over.
            Err(e) if e.kind() == ErrorKind::Internal => {
                errors += 1;
                panics += 1;
                assert!(e.to_string().contains("steel panicked"), "{e}");
                engine = fresh();
            }
            Err(_) => errors += 1,
        }
        assert_eq!(run(&mut engine, "(+ 1 2)"), json!(3), "after {src:.200}");
    }
    println!(
        "{} generated programs ({} direct primitive calls) ran without aborting the process ({} ended in an error, {} of them a panic inside steel)",
        programs.len(),
        called,
        errors,
        panics
    );
    assert!(errors > 0 && errors < programs.len());
}

/// A panic inside steel is an error naming it, and the engine refuses to
/// run anything more (its VM is left half unwound), saying so.
#[test]
fn after_a_panic_inside_steel_the_engine_refuses_to_go_on() {
    let (mut e, _) = engine_with(&[], Some(Duration::from_secs(10)));
    let err = fail(&mut e, "(make-bytevector -1 0)");
    assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
    assert!(err.to_string().contains("steel panicked"), "{err}");
    let again = fail(&mut e, "(+ 1 2)");
    assert!(
        again.to_string().contains("this engine stops here"),
        "{again}"
    );
}

/// Values nested a million deep, or containing themselves, made at run
/// time: steel would overflow its stack hashing, comparing or dropping
/// them; nib refuses to build or hash them instead.
#[test]
fn values_nested_too_deep_are_refused_where_steel_would_recurse() {
    let (mut e, _) = engine_with(&[], Some(Duration::from_secs(60)));
    for src in [
        "(let loop ([i 0] [x 0]) (if (= i 1000000) #t (loop (+ i 1) (cons x 1))))",
        "(let loop ([i 0] [x 0]) (if (= i 1000000) #t (loop (+ i 1) (cons 1 (cons x 2)))))",
        "(define (deep n) (let loop ([i 0] [x '()]) (if (= i n) x (loop (+ i 1) (list x))))) (hash-ref (hash (deep 100000) 1) 0 0)",
        "(define (deep n) (let loop ([i 0] [x 0]) (if (= i n) x (loop (+ i 1) (vector x))))) (hash (deep 100000) 1)",
        "(define (deep n) (let loop ([i 0] [x '()]) (if (= i n) x (loop (+ i 1) (list x))))) (equal? (deep 100000) (deep 100000))",
        "(define v (vector 0)) (vector-set! v 0 v) (hash v 1)",
    ] {
        let err = fail(&mut e, src);
        assert!(
            err.to_string().contains("nests more than 1000 deep"),
            "{src}: {err}"
        );
        assert_eq!(run(&mut e, "(+ 1 2)"), json!(3));
    }
    // Ordinary pairs, keys and comparisons are untouched.
    assert_eq!(
        run(
            &mut e,
            "(list (car (cons 1 2)) (hash-ref (hash (list 1 2) 3) (list 1 2)) (equal? (list 1 (list 2)) (list 1 (list 2))) (length (cons 1 (list 2 3))))"
        ),
        json!([1, 3, true, 3])
    );
}
