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

/// The primitives capped here.
pub(crate) const CAPPED: &[&str] = &[
    "make-vector",
    "make-string",
    "range",
    "expt",
    "arithmetic-shift",
    "*",
    "/",
    "+",
    "-",
    "square",
    "string->number",
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
        (_, SteelVal::FuncV(_) | SteelVal::BoxedFunction(_)) => {
            let check: fn(&[SteelVal]) -> SteelResult<()> = match name {
                "make-string" => check_make_string,
                "range" => check_range,
                "expt" => check_expt,
                "arithmetic-shift" => check_shift,
                "*" | "/" => check_product,
                "+" | "-" => check_sum,
                "square" => check_square,
                "string->number" => check_parse,
                "reader-push-string" => check_read,
                _ => return None,
            };
            let f: Primitive = match orig {
                SteelVal::FuncV(f) => {
                    let f = *f;
                    Arc::new(move |args: &[SteelVal]| f(args))
                }
                SteelVal::BoxedFunction(b) => Arc::clone(&b.function),
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
        SteelVal::BigNum(_) | SteelVal::BigRational(_) | SteelVal::Rational(_) | SteelVal::Complex(_)
    )
}

/// `*` and `/`: the digits of a product or quotient are at most the sum of
/// its operands'.
fn check_product(args: &[SteelVal]) -> SteelResult<()> {
    if args.len() < 2 || !args.iter().any(big) {
        return Ok(());
    }
    let sum: f64 = args.iter().filter_map(digits).sum();
    if sum > MAX_DIGITS {
        let who = match args {
            _ if args.iter().any(|a| matches!(a, SteelVal::BigRational(_))) => "/ or *",
            _ => "*",
        };
        return Err(too_large(who));
    }
    Ok(())
}

/// `+` and `-`: integers grow by a digit at most, but fractions add like
/// products (a/b + c/d = (ad + bc)/bd), so their digits are summed too.
fn check_sum(args: &[SteelVal]) -> SteelResult<()> {
    if !args.iter().any(big) {
        return Ok(());
    }
    let fractions = args
        .iter()
        .any(|a| matches!(a, SteelVal::Rational(_) | SteelVal::BigRational(_) | SteelVal::Complex(_)));
    let d = if fractions {
        args.iter().filter_map(digits).sum()
    } else {
        args.iter().filter_map(digits).fold(0.0, f64::max) + 1.0
    };
    if d > MAX_DIGITS {
        return Err(too_large("+ or -"));
    }
    Ok(())
}

fn check_square(args: &[SteelVal]) -> SteelResult<()> {
    match args.first().filter(|a| big(a)).and_then(digits) {
        Some(d) if 2.0 * d > MAX_DIGITS => Err(too_large("square")),
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
    let e = match exp {
        SteelVal::IntV(e) if *e > 0 => *e as f64,
        SteelVal::BigNum(_) => f64::INFINITY,
        _ => return Ok(()),
    };
    let small = matches!(base, SteelVal::IntV(-1..=1));
    match digits(base) {
        // A fraction's digits grow with the power however small it is.
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
