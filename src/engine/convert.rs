//! JSON ⇄ Scheme values, without steel's lossy built-in conversion.
//!
//! JSON → Scheme:
//!
//! | JSON | Scheme |
//! |---|---|
//! | object | association list with **string** keys, fields in order: `(("ok" . #t) ("text" . "…"))` |
//! | array | list |
//! | integer | exact integer (beyond `i64`: a bignum) |
//! | other number | flonum |
//! | `true` / `false` | `#t` / `#f` |
//! | string | string |
//! | `null` | the void value (`void`; prelude: `json-null`, `(json-null? x)`), distinct from `'()` and `#f` |
//!
//! A field whose value is a list reads like any alist entry: `(cdr (assoc "k" al))`
//! is the value in both cases (`("k" . "v")` and `("k" 1 2)`).
//!
//! Scheme → JSON is the reverse, and also reads vectors as arrays, hash maps
//! with string keys as objects, symbols and characters as strings. An
//! association list is recognised as an object when it is a non-empty list
//! whose every element is a pair (or a non-empty list) with a string first
//! element. Two consequences, both documented limits: `{}` and `[]` both
//! become `'()` and come back as `[]`; an array whose elements are all
//! non-empty arrays starting with a string comes back as an object (send a
//! vector, `#(...)`, to force an array). NaN and infinities are refused with
//! an error, never a panic; so are procedures, ports and other values JSON
//! cannot hold.

use serde_json::{Map, Number, Value};
use steel::SteelVal;
use steel::rerrs::ErrorKind;
use steel::rvals::{FromSteelVal, IntoSteelVal};

use super::error::steel_error;

/// How deep a value may nest before conversion gives up (a cycle through a
/// mutable box or a runaway structure must not overflow the host's stack).
const MAX_DEPTH: usize = 256;

/// A JSON value as a Scheme value.
pub fn json_to_steel(v: &Value) -> Result<SteelVal, steel::SteelErr> {
    to_steel(v, 0)
}

fn to_steel(v: &Value, depth: usize) -> Result<SteelVal, steel::SteelErr> {
    if depth > MAX_DEPTH {
        return Err(steel_error(
            ErrorKind::ConversionError,
            format!("JSON value nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    Ok(match v {
        Value::Null => SteelVal::Void,
        Value::Bool(b) => SteelVal::BoolV(*b),
        Value::Number(n) => number_to_steel(n),
        Value::String(s) => SteelVal::StringV(s.as_str().into()),
        Value::Array(items) => {
            let items = items
                .iter()
                .map(|x| to_steel(x, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            items.into_steelval()?
        }
        Value::Object(fields) => {
            let mut entries = Vec::with_capacity(fields.len());
            for (k, v) in fields {
                let value = to_steel(v, depth + 1)?;
                entries.push(cons(SteelVal::StringV(k.as_str().into()), value)?);
            }
            entries.into_steelval()?
        }
    })
}

fn number_to_steel(n: &Number) -> SteelVal {
    if let Some(i) = n.as_i64() {
        isize::try_from(i).map_or(SteelVal::NumV(i as f64), SteelVal::IntV)
    } else if let Some(u) = n.as_u64() {
        SteelVal::from(u128::from(u))
    } else {
        // Not an integer: serde_json only holds finite floats.
        SteelVal::NumV(n.as_f64().unwrap_or(0.0))
    }
}

/// `(cons car cdr)` as Scheme does it: onto a list gives a list, otherwise a
/// pair.
pub fn cons(car: SteelVal, cdr: SteelVal) -> Result<SteelVal, steel::SteelErr> {
    let (mut car, mut cdr) = (car, cdr);
    steel::primitives::lists::cons(&mut car, &mut cdr)
}

/// A Scheme value as JSON. The error says which value could not be
/// converted and where (`$[2].text`).
pub fn steel_to_json(v: &SteelVal) -> Result<Value, String> {
    to_json(v, &mut String::from("$"), 0)
}

fn to_json(v: &SteelVal, at: &mut String, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "{at}: the value nests deeper than {MAX_DEPTH} levels"
        ));
    }
    Ok(match v {
        SteelVal::Void => Value::Null,
        SteelVal::BoolV(b) => Value::Bool(*b),
        SteelVal::IntV(i) => Value::from(*i as i64),
        SteelVal::BigNum(_) => {
            big_to_json(v).ok_or_else(|| format!("{at}: the integer {v} is too large for JSON"))?
        }
        SteelVal::NumV(f) => float(*f, at)?,
        SteelVal::Rational(r) => float(f64::from(*r.numer()) / f64::from(*r.denom()), at)?,
        SteelVal::StringV(s) => Value::String(s.as_str().to_string()),
        SteelVal::SymbolV(s) => Value::String(s.as_str().to_string()),
        SteelVal::CharV(c) => Value::String(c.to_string()),
        SteelVal::ListV(items) => {
            if let Some(fields) = alist_fields(v) {
                object(fields, at, depth)?
            } else {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.push(nested(item, at, &format!("[{i}]"), depth)?);
                }
                Value::Array(out)
            }
        }
        SteelVal::VectorV(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(nested(item, at, &format!("[{i}]"), depth)?);
            }
            Value::Array(out)
        }
        SteelVal::MutableVector(v) => {
            // steel's heap reference unwraps internally; it holds while the
            // value is alive, but never let it take the host down.
            let items = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| v.get()))
                .map_err(|_| format!("{at}: a vector that is no longer alive"))?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(nested(item, at, &format!("[{i}]"), depth)?);
            }
            Value::Array(out)
        }
        SteelVal::HashMapV(map) => {
            let mut fields = Vec::with_capacity(map.len());
            for (k, value) in map.iter() {
                let SteelVal::StringV(key) = k else {
                    return Err(format!(
                        "{at}: a hash map key must be a string to become a JSON object key, got {}",
                        describe(k)
                    ));
                };
                fields.push((key.as_str().to_string(), value.clone()));
            }
            // Hash maps have no order; sort so the output is stable.
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            object(fields, at, depth)?
        }
        SteelVal::Pair(_) => {
            return Err(format!(
                "{at}: {} is a pair that is not inside an association list with string keys; JSON has no pairs",
                describe(v)
            ));
        }
        other => {
            return Err(format!(
                "{at}: {} cannot be converted to JSON",
                describe(other)
            ));
        }
    })
}

fn nested(v: &SteelVal, at: &mut String, step: &str, depth: usize) -> Result<Value, String> {
    let len = at.len();
    at.push_str(step);
    let out = to_json(v, at, depth + 1);
    at.truncate(len);
    out
}

fn object(fields: Vec<(String, SteelVal)>, at: &mut String, depth: usize) -> Result<Value, String> {
    let mut out = Map::new();
    for (k, value) in fields {
        let step = if k
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            format!(".{k}")
        } else {
            format!("[{k:?}]")
        };
        let value = nested(&value, at, &step, depth)?;
        out.insert(k, value);
    }
    Ok(Value::Object(out))
}

fn float(f: f64, at: &str) -> Result<Value, String> {
    Number::from_f64(f).map(Value::Number).ok_or_else(|| {
        format!("{at}: the number {f} is not finite, and JSON has no NaN or infinity")
    })
}

fn big_to_json(v: &SteelVal) -> Option<Value> {
    if let Ok(i) = i64::from_steelval(v) {
        return Some(Value::from(i));
    }
    v.to_string().parse::<u64>().ok().map(Value::from)
}

/// The fields of an association list with string keys, or `None` when the
/// value does not read as one (see the module doc for the rule).
pub fn alist_fields(v: &SteelVal) -> Option<Vec<(String, SteelVal)>> {
    let SteelVal::ListV(items) = v else {
        return None;
    };
    if items.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items.iter() {
        match alist_entry(item)? {
            (SteelVal::StringV(k), value) => out.push((k.as_str().to_string(), value)),
            _ => return None,
        }
    }
    Some(out)
}

/// An alist entry `(key . value)`: a pair, or a non-empty list whose tail is
/// the value.
pub fn alist_entry(item: &SteelVal) -> Option<(SteelVal, SteelVal)> {
    match item {
        SteelVal::Pair(p) => Some((p.car(), p.cdr())),
        SteelVal::ListV(l) => {
            let first = l.first()?.clone();
            let rest: Vec<SteelVal> = l.iter().skip(1).cloned().collect();
            Some((first, rest.into_steelval().ok()?))
        }
        _ => None,
    }
}

/// A short description of a Scheme value for error messages: what it is,
/// and the value itself when short.
pub fn describe(v: &SteelVal) -> String {
    let kind = match v {
        SteelVal::StringV(_) => "the string",
        SteelVal::SymbolV(_) => "the symbol",
        SteelVal::IntV(_) | SteelVal::BigNum(_) => "the integer",
        SteelVal::NumV(_) | SteelVal::Rational(_) | SteelVal::BigRational(_) => "the number",
        SteelVal::BoolV(_) => "the boolean",
        SteelVal::CharV(_) => "the character",
        SteelVal::Void => return "void (JSON null)".to_string(),
        SteelVal::ListV(l) if l.is_empty() => return "the empty list '()".to_string(),
        SteelVal::ListV(_) => "the list",
        SteelVal::Pair(_) => "the pair",
        SteelVal::VectorV(_) | SteelVal::MutableVector(_) => "the vector",
        SteelVal::HashMapV(_) => "the hash map",
        SteelVal::Closure(_)
        | SteelVal::FuncV(_)
        | SteelVal::BoxedFunction(_)
        | SteelVal::MutFunc(_)
        | SteelVal::BuiltIn(_)
        | SteelVal::ContinuationFunction(_) => return "a procedure".to_string(),
        SteelVal::PortV(_) => return "a port".to_string(),
        _ => "the value",
    };
    let shown = match v {
        SteelVal::SymbolV(s) => format!("'{}", s.as_str()),
        SteelVal::StringV(s) => format!("{:?}", s.as_str()),
        other => other.to_string(),
    };
    if shown.chars().count() > 60 {
        let cut: String = shown.chars().take(57).collect();
        format!("{kind} {cut}...")
    } else {
        format!("{kind} {shown}")
    }
}
