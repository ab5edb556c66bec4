//! Caps on steel's allocating and long-running primitives, wherever a
//! strategy reaches them: by name, through the `#%prim.` aliases, and
//! through `require-builtin` of their modules. One primitive call is not
//! interrupted by the deadline (the VM checks it between instructions) and
//! a huge allocation aborts the process, so a primitive asked for more
//! than a strategy can need is refused before it starts.
//!
//! Growth that happens over many instructions (string doubling, a list
//! built up in a loop) is the memory budget's: see `watchdog.rs`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use steel::SteelVal;
use steel::rvals::Result as SteelResult;

/// The most elements one call may allocate (a vector, a string, a range).
pub(crate) const MAX_ELEMENTS: isize = 10_000_000;
/// The most decimal digits a number built by one call may have. Each
/// arithmetic call is one uninterruptible primitive, and the cost of a
/// multiplication grows faster than its operands: numbers under the cap
/// multiply in milliseconds, a loop of squarings past it would run for
/// minutes in one call.
pub(crate) const MAX_DIGITS: f64 = 300_000.0;
/// The same for an exact fraction (and `/`, which makes one): every
/// operation on a fraction reduces it by a greatest common divisor, whose
/// cost grows with the square of the digits (a second near 300,000).
pub(crate) const MAX_FRACTION_DIGITS: f64 = 30_000.0;

/// The primitives capped here.
pub(crate) const CAPPED: &[&str] = &[
    "make-vector",
    "make-string",
    "make-bytevector",
    "make-bytes",
    "range",
    "expt",
    "arithmetic-shift",
    "*",
    "/",
    "+",
    "-",
    "square",
    "string->number",
    "sqrt",
    // steel recurses over a value it hashes, compares or drops: a value
    // nested a million deep (or containing itself) overflows the stack.
    "cons",
    "equal?",
    "hash",
    "hash-insert",
    "hash-ref",
    "hash-try-get",
    "hash-contains?",
    "hash-remove",
    "hashset",
    "hashset-insert",
    "hashset-contains?",
    "list->hashset",
    // `read` hands its text to steel's reader through this one; the
    // reader recurses once per bracket and quote, as the compiler's does.
    "reader-push-string",
];

/// A primitive's body, callable from a wrapper.
type Primitive = Arc<dyn Fn(&[SteelVal]) -> SteelResult<SteelVal> + Send + Sync>;

thread_local! {
    /// The capped values made on this thread, for binding as globals.
    static MADE: RefCell<HashMap<String, SteelVal>> = RefCell::new(HashMap::new());
}

fn refuse(message: String) -> steel::SteelErr {
    steel::SteelErr::new(steel::rerrs::ErrorKind::Generic, message)
}

fn too_many(who: &str, n: isize) -> steel::SteelErr {
    refuse(format!(
        "{who}: {n} elements is more than a strategy may allocate at once ({MAX_ELEMENTS}); build it in parts"
    ))
}

fn fraction_too_large(who: &str) -> steel::SteelErr {
    refuse(format!(
        "{who}: the fraction would have more than {MAX_FRACTION_DIGITS} digits (nib's cap on exact fractions); use quotient for whole numbers, or inexact numbers (floats)"
    ))
}

fn fraction(v: &SteelVal) -> bool {
    match v {
        SteelVal::Rational(_) | SteelVal::BigRational(_) => true,
        SteelVal::Complex(c) => fraction(&c.re) || fraction(&c.im),
        _ => false,
    }
}

fn too_large(who: &str) -> steel::SteelErr {
    refuse(format!(
        "{who}: the result would have more than {MAX_DIGITS} digits (nib's cap on exact numbers); use inexact numbers (floats) or keep numbers smaller"
    ))
}

/// The capped form of `name`, given steel's own value for it.
pub(crate) fn capped(name: &str, orig: &SteelVal) -> Option<SteelVal> {
    let value = match (name, orig) {
        // steel does not export its VM context type: the closure's
        // parameter types come from the variant's.
        ("make-vector", SteelVal::BuiltIn(_)) => SteelVal::BuiltIn(|ctx, args| {
            if let Some(SteelVal::IntV(n)) = args.first()
                && *n > MAX_ELEMENTS
            {
                return Some(Err(too_many("make-vector", *n)));
            }
            steel::primitives::vectors::make_vector(ctx, args)
        }),
        (_, SteelVal::FuncV(_) | SteelVal::BoxedFunction(_) | SteelVal::MutFunc(_)) => {
            let check: fn(&[SteelVal]) -> SteelResult<()> = match name {
                "make-string" => check_make_string,
                "make-bytevector" | "make-bytes" => check_make_bytes,
                "range" => check_range,
                "expt" => check_expt,
                "arithmetic-shift" => check_shift,
                "*" => check_multiply,
                "/" => check_divide,
                "+" | "-" => check_sum,
                "square" => check_square,
                "string->number" => check_parse,
                "sqrt" => check_complex,
                "cons" => check_cons,
                "equal?" | "hashset" | "list->hashset" => check_all_shallow,
                "hash" => check_hash_keys,
                "hash-insert" | "hash-ref" | "hash-try-get" | "hash-contains?" | "hash-remove"
                | "hashset-insert" | "hashset-contains?" => check_key,
                "reader-push-string" => check_read,
                _ => return None,
            };
            let f: Primitive = match orig {
                SteelVal::FuncV(f) => {
                    let f = *f;
                    Arc::new(move |args: &[SteelVal]| f(args))
                }
                SteelVal::BoxedFunction(b) => Arc::clone(&b.function),
                // It may take its arguments apart: it gets its own copy.
                SteelVal::MutFunc(f) => {
                    let f = *f;
                    Arc::new(move |args: &[SteelVal]| f(&mut args.to_vec()))
                }
                _ => return None,
            };
            SteelVal::anonymous_boxed_function(Arc::new(move |args: &[SteelVal]| {
                check(args)?;
                f(args)
            }))
        }
        _ => return None,
    };
    MADE.with(|m| m.borrow_mut().insert(name.to_string(), value.clone()));
    Some(value)
}

/// The capped values made on this thread, by name.
pub(crate) fn made() -> Vec<(String, SteelVal)> {
    MADE.with(|m| {
        m.borrow()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    })
}

fn check_read(args: &[SteelVal]) -> SteelResult<()> {
    if let Some(SteelVal::StringV(text)) = args.get(1) {
        super::nesting::check(text.as_str(), "read")
            .map_err(|e| refuse(e.message().to_string()))?;
    }
    Ok(())
}

fn check_make_string(args: &[SteelVal]) -> SteelResult<()> {
    match args.first() {
        Some(SteelVal::IntV(n)) if *n > MAX_ELEMENTS => Err(too_many("make-string", *n)),
        _ => Ok(()),
    }
}

fn check_make_bytes(args: &[SteelVal]) -> SteelResult<()> {
    match args.first() {
        Some(SteelVal::IntV(n)) if *n > MAX_ELEMENTS => Err(too_many("make-bytevector", *n)),
        _ => Ok(()),
    }
}

fn check_range(args: &[SteelVal]) -> SteelResult<()> {
    let n = match args {
        [SteelVal::IntV(hi)] => *hi,
        [SteelVal::IntV(lo), SteelVal::IntV(hi)] => hi.saturating_sub(*lo),
        _ => 0,
    };
    if n > MAX_ELEMENTS {
        return Err(too_many("range", n));
    }
    Ok(())
}

/// Decimal digits of an exact number, roughly: of an integer, of a
/// fraction's numerator and denominator together, of a complex number's
/// parts together. `None` for anything else (floats never grow).
fn digits(v: &SteelVal) -> Option<f64> {
    const PER_BIT: f64 = std::f64::consts::LOG10_2;
    match v {
        SteelVal::IntV(i) => Some((i.unsigned_abs().max(1) as f64).log10() + 1.0),
        SteelVal::BigNum(b) => Some(b.bits() as f64 * PER_BIT),
        SteelVal::Rational(r) => Some(
            (r.numer().unsigned_abs().max(1) as f64).log10()
                + (r.denom().unsigned_abs().max(1) as f64).log10()
                + 2.0,
        ),
        SteelVal::BigRational(r) => Some((r.numer().bits() + r.denom().bits()) as f64 * PER_BIT),
        SteelVal::Complex(c) => Some(digits(&c.re).unwrap_or(0.0) + digits(&c.im).unwrap_or(0.0)),
        _ => None,
    }
}

/// Whether a value may hold many digits (the cheap test first: small
/// integers and floats, the common case, skip the sum).
fn big(v: &SteelVal) -> bool {
    matches!(
        v,
        SteelVal::BigNum(_)
            | SteelVal::BigRational(_)
            | SteelVal::Rational(_)
            | SteelVal::Complex(_)
    )
}

/// `*` and `/`: the digits of a product or quotient are at most the sum of
/// its operands'. A quotient is a fraction (reduced by a greatest common
/// divisor even when it comes out whole), and so is a product with one.
fn check_product(args: &[SteelVal], dividing: bool) -> SteelResult<()> {
    if !args.iter().any(big) || (args.len() < 2 && !dividing) {
        return Ok(());
    }
    let sum: f64 = args.iter().filter_map(digits).sum();
    if sum > MAX_FRACTION_DIGITS && (dividing || args.iter().any(fraction)) {
        return Err(fraction_too_large(if dividing { "/" } else { "*" }));
    }
    if sum > MAX_DIGITS {
        return Err(too_large("*"));
    }
    Ok(())
}

fn check_multiply(args: &[SteelVal]) -> SteelResult<()> {
    check_product(args, false)
}

fn check_divide(args: &[SteelVal]) -> SteelResult<()> {
    check_product(args, true)
}

/// `+` and `-`: integers grow by a digit at most, but fractions add like
/// products (a/b + c/d = (ad + bc)/bd), so their digits are summed too.
fn check_sum(args: &[SteelVal]) -> SteelResult<()> {
    if !args.iter().any(big) {
        return Ok(());
    }
    let fractions = args.iter().any(|a| {
        matches!(
            a,
            SteelVal::Rational(_) | SteelVal::BigRational(_) | SteelVal::Complex(_)
        )
    });
    if fractions {
        if args.iter().filter_map(digits).sum::<f64>() > MAX_FRACTION_DIGITS {
            return Err(fraction_too_large("+ or -"));
        }
        return Ok(());
    }
    if args.iter().filter_map(digits).fold(0.0, f64::max) + 1.0 > MAX_DIGITS {
        return Err(too_large("+ or -"));
    }
    Ok(())
}

fn check_square(args: &[SteelVal]) -> SteelResult<()> {
    let Some(x) = args.first().filter(|a| big(a)) else {
        return Ok(());
    };
    match digits(x) {
        Some(d) if fraction(x) && 2.0 * d > MAX_FRACTION_DIGITS => {
            Err(fraction_too_large("square"))
        }
        Some(d) if 2.0 * d > MAX_DIGITS => Err(too_large("square")),
        _ => Ok(()),
    }
}

/// The deepest a value may nest where steel recurses over it (hashing
/// it as a key, comparing it, dropping a chain of pairs): far beyond real
/// data, far below what overflows a 2 MiB thread stack.
pub(crate) const MAX_VALUE_DEPTH: usize = 1000;
/// How many containers one check walks at most (a value sharing its parts
/// can have more paths than memory).
const MAX_WALKED: usize = 1_000_000;

/// Whether `v` nests deeper than [`MAX_VALUE_DEPTH`] (a value containing
/// itself nests without end), walked without recursion.
fn too_deep(v: &SteelVal) -> bool {
    fn container(v: &SteelVal) -> bool {
        matches!(
            v,
            SteelVal::ListV(_)
                | SteelVal::Pair(_)
                | SteelVal::VectorV(_)
                | SteelVal::MutableVector(_)
                | SteelVal::HashMapV(_)
                | SteelVal::HashSetV(_)
        )
    }
    if !container(v) {
        return false;
    }
    let mut stack: Vec<(SteelVal, usize)> = vec![(v.clone(), 1)];
    let mut walked = 0usize;
    while let Some((v, depth)) = stack.pop() {
        if depth > MAX_VALUE_DEPTH || walked > MAX_WALKED {
            return true;
        }
        walked += 1;
        let mut push = |x: &SteelVal| {
            if container(x) {
                stack.push((x.clone(), depth + 1));
            }
        };
        match &v {
            SteelVal::ListV(l) => l.iter().for_each(&mut push),
            SteelVal::Pair(p) => {
                push(&p.car());
                push(&p.cdr());
            }
            SteelVal::VectorV(items) => items.iter().for_each(&mut push),
            SteelVal::MutableVector(h) => {
                // `get` panics on a vector already collected: nothing to walk.
                if let Ok(items) =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| h.get()))
                {
                    items.iter().for_each(&mut push);
                }
            }
            SteelVal::HashMapV(m) => m.iter().for_each(|(k, v)| {
                push(k);
                push(v);
            }),
            SteelVal::HashSetV(set) => set.iter().for_each(&mut push),
            _ => {}
        }
    }
    false
}

fn nests_too_deep(who: &str) -> steel::SteelErr {
    refuse(format!(
        "{who}: the value nests more than {MAX_VALUE_DEPTH} deep, or contains itself; steel would overflow its stack on it — flatten the data"
    ))
}

/// `cons` onto a list makes a list; onto anything else a pair, which
/// steel drops and walks recursively: its parts are checked then (a list
/// grown by `cons` costs nothing extra).
fn check_cons(args: &[SteelVal]) -> SteelResult<()> {
    match args {
        [_, SteelVal::ListV(_)] => Ok(()),
        [car, cdr] if too_deep(car) || too_deep(cdr) => Err(nests_too_deep("cons")),
        _ => Ok(()),
    }
}

fn check_all_shallow(args: &[SteelVal]) -> SteelResult<()> {
    if args.iter().any(too_deep) {
        return Err(nests_too_deep("equal? or hashset"));
    }
    Ok(())
}

/// `(hash k v ...)`: the keys are hashed.
fn check_hash_keys(args: &[SteelVal]) -> SteelResult<()> {
    if args.iter().step_by(2).any(too_deep) {
        return Err(nests_too_deep("hash"));
    }
    Ok(())
}

/// `(hash-ref table key ...)` and the like: the key is hashed.
fn check_key(args: &[SteelVal]) -> SteelResult<()> {
    match args.get(1) {
        Some(key) if too_deep(key) => Err(nests_too_deep("a hash table's key")),
        _ => Ok(()),
    }
}

/// steel's `sqrt` of a complex number with a NaN or infinite part
/// recurses without end (a stack overflow aborts the process).
fn check_complex(args: &[SteelVal]) -> SteelResult<()> {
    let finite = |v: &SteelVal| !matches!(v, SteelVal::NumV(f) if !f.is_finite());
    match args.first() {
        Some(SteelVal::Complex(c)) if !finite(&c.re) || !finite(&c.im) => Err(refuse(format!(
            "sqrt: {} has a part that is not a finite number; nib refuses it (steel would recurse without end)",
            args[0]
        ))),
        _ => Ok(()),
    }
}

/// `string->number`: parsing a long run of digits takes time that grows
/// with its square, in one call.
fn check_parse(args: &[SteelVal]) -> SteelResult<()> {
    match args.first() {
        Some(SteelVal::StringV(s)) if s.len() as f64 > MAX_DIGITS => Err(refuse(format!(
            "string->number: a text of {} characters would make a number of more than {MAX_DIGITS} digits (nib's cap on exact numbers); parse it in parts",
            s.len()
        ))),
        _ => Ok(()),
    }
}

fn check_expt(args: &[SteelVal]) -> SteelResult<()> {
    let [base, exp] = args else { return Ok(()) };
    // A negative power is the reciprocal of the positive one: as many
    // digits in the denominator.
    let e = match exp {
        SteelVal::IntV(e) if *e != 0 => e.unsigned_abs() as f64,
        SteelVal::BigNum(_) => f64::INFINITY,
        _ => return Ok(()),
    };
    let small = matches!(base, SteelVal::IntV(-1..=1));
    let negative = matches!(exp, SteelVal::IntV(e) if *e < 0);
    match digits(base) {
        // A fraction's digits grow with the power however small it is; a
        // negative power makes a fraction.
        Some(d)
            if (fraction(base) || negative) && !small && d.max(1.0) * e > MAX_FRACTION_DIGITS =>
        {
            Err(fraction_too_large("expt"))
        }
        Some(d) if big(base) && d.max(1.0) * e > MAX_DIGITS => Err(too_large("expt")),
        Some(d) if !small && (d - 1.0).max(0.3) * e > MAX_DIGITS => Err(too_large("expt")),
        _ => Ok(()),
    }
}

fn check_shift(args: &[SteelVal]) -> SteelResult<()> {
    let [n, by] = args else { return Ok(()) };
    let bits = match by {
        SteelVal::IntV(b) if *b > 0 => *b as f64,
        SteelVal::BigNum(_) => f64::INFINITY,
        _ => return Ok(()),
    };
    let zero = matches!(n, SteelVal::IntV(0));
    if !zero && bits * std::f64::consts::LOG10_2 + digits(n).unwrap_or(0.0) > MAX_DIGITS {
        return Err(too_large("arithmetic-shift"));
    }
    Ok(())
}
