//! `nib compare A B`: two runs of the same instances (two builds, two
//! strategies, two models) side by side, per instance and in total, with
//! the difference, a paired bootstrap interval, and a plain word on
//! whether the difference is within noise.
//!
//! - `figures.rs`: what is read from each session's event log, and the
//!   runs a side is made of (their definitions are there);
//! - `chart.rs`: an SVG bar chart per figure, written by hand.
//!
//! A side is one or more runs (`A`, then each `--a PATH`): repeated runs
//! of one side are pooled, an instance's figure being its mean over the
//! side's runs that have it. Only instances both sides have are compared;
//! the others are listed. The interval is a paired bootstrap over those
//! instances (2000 resamples, a fixed seed, so a report is reproducible):
//! the 2.5th and 97.5th percentiles of B's total minus A's total (for the
//! resolved rate, of the rates). A difference whose interval holds 0 is
//! called within noise.

mod chart;
mod figures;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use crate::settings::UsageError;
pub use figures::{FIGURES, Figures, read_log};

/// `nib compare A B [--a PATH]... [--b PATH]... [--json] [--out DIR]`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Side A: a `nib swebench` OUT directory, a directory of event logs,
    /// or one event log.
    pub a: PathBuf,
    /// Side B, as A.
    pub b: PathBuf,
    /// Another run of side A, pooled with it (repeatable).
    #[arg(long = "a", value_name = "PATH")]
    pub more_a: Vec<PathBuf>,
    /// Another run of side B (repeatable).
    #[arg(long = "b", value_name = "PATH")]
    pub more_b: Vec<PathBuf>,
    /// The evaluation of A's runs, in their order: the harness's
    /// `<model>.<run_id>.json`, a JSON list of resolved ids, or one a line
    /// (default: a report with `resolved_ids` in the run directory, else
    /// `nib swebench grade`'s grade.json files).
    #[arg(long = "resolved-a", value_name = "FILE")]
    pub resolved_a: Vec<PathBuf>,
    /// The evaluation of B's runs, as --resolved-a.
    #[arg(long = "resolved-b", value_name = "FILE")]
    pub resolved_b: Vec<PathBuf>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write report.txt, compare.json and a chart per figure
    /// (chart-<figure>.svg) into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 2000)]
    pub resamples: usize,
}

/// One side: its runs and, per instance, the pooled figures.
pub struct Side {
    pub runs: Vec<PathBuf>,
    pub instances: BTreeMap<String, Figures>,
}

pub fn run(args: CompareArgs) -> Result<ExitCode, UsageError> {
    let a = side(&args.a, &args.more_a, &args.resolved_a, "a")?;
    let b = side(&args.b, &args.more_b, &args.resolved_b, "b")?;
    let report = compare(&a, &b, args.resamples.max(100));
    let text = render(&report);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        print!("{text}");
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("cannot create --out {}: {e}", dir.display())))?;
        let write = |name: &str, body: String| {
            let path = dir.join(name);
            std::fs::write(&path, body)
                .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))
        };
        write("report.txt", text)?;
        write(
            "compare.json",
            serde_json::to_string_pretty(&report).unwrap_or_default() + "\n",
        )?;
        for total in report["totals"].as_array().into_iter().flatten() {
            let key = total["figure"].as_str().unwrap_or("figure");
            write(&format!("chart-{key}.svg"), chart::bars(total))?;
        }
        eprintln!("nib compare: report, JSON and charts in {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn side(
    first: &Path,
    more: &[PathBuf],
    resolved: &[PathBuf],
    name: &str,
) -> Result<Side, UsageError> {
    let runs: Vec<PathBuf> = std::iter::once(first.to_path_buf())
        .chain(more.iter().cloned())
        .collect();
    if !resolved.is_empty() && resolved.len() != runs.len() {
        return Err(UsageError(format!(
            "--resolved-{name}: {} file(s) for {} run(s) of side {}: give one per run, in order",
            resolved.len(),
            runs.len(),
            name.to_uppercase()
        )));
    }
    let mut per_instance: BTreeMap<String, Vec<Figures>> = BTreeMap::new();
    for (k, run) in runs.iter().enumerate() {
        let set = match resolved.get(k) {
            Some(f) => Some(figures::resolved_ids(f).map_err(UsageError)?),
            None => None,
        };
        let figs = figures::read_run(run, set.as_ref()).map_err(UsageError)?;
        for (id, f) in figs.instances {
            per_instance.entry(id).or_default().push(f);
        }
    }
    let instances = per_instance
        .into_iter()
        .map(|(id, list)| (id, pool(&list)))
        .collect();
    Ok(Side { runs, instances })
}

/// The mean of each figure over the runs that have it.
fn pool(list: &[Figures]) -> Figures {
    let mut sums: BTreeMap<&'static str, (f64, f64)> = BTreeMap::new();
    for f in list {
        for (k, v) in f {
            let e = sums.entry(k).or_default();
            e.0 += v;
            e.1 += 1.0;
        }
    }
    sums.into_iter().map(|(k, (s, n))| (k, s / n)).collect()
}

/// splitmix64: a fixed stream from a seed, the same on every machine.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

/// The figure's statistic over a set of instances: the resolved rate is a
/// mean, every other figure a total.
fn statistic(key: &str, values: &[f64]) -> f64 {
    let sum: f64 = values.iter().sum();
    if key == "resolved" && !values.is_empty() {
        sum / values.len() as f64
    } else {
        sum
    }
}

/// The 95% paired bootstrap interval of B's statistic minus A's.
fn interval(key: &str, pairs: &[(f64, f64)], resamples: usize) -> Option<(f64, f64)> {
    if pairs.len() < 2 {
        return None;
    }
    let mut rng = Rng(0x006e_6962_5f63_6d70); // "nib_cmp"
    let mut diffs = Vec::with_capacity(resamples);
    let (mut xa, mut xb) = (
        Vec::with_capacity(pairs.len()),
        Vec::with_capacity(pairs.len()),
    );
    for _ in 0..resamples {
        xa.clear();
        xb.clear();
        for _ in 0..pairs.len() {
            let (va, vb) = pairs[rng.below(pairs.len())];
            xa.push(va);
            xb.push(vb);
        }
        diffs.push(statistic(key, &xb) - statistic(key, &xa));
    }
    diffs.sort_by(f64::total_cmp);
    let at = |q: f64| diffs[((diffs.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// The comparison as JSON: `a`, `b` (runs, instances), `paired`,
/// `only_a`, `only_b`, `totals` (per figure: A, B, the difference, the
/// interval, `within_noise`), `rates`, and `instances` (per id, each
/// figure's A and B).
pub fn compare(a: &Side, b: &Side, resamples: usize) -> Value {
    let paired: Vec<&String> = a
        .instances
        .keys()
        .filter(|id| b.instances.contains_key(*id))
        .collect();
    fn only<'s>(x: &'s Side, y: &Side) -> Vec<&'s String> {
        x.instances
            .keys()
            .filter(|id| !y.instances.contains_key(*id))
            .collect()
    }
    let mut totals = Vec::new();
    for (key, label) in FIGURES {
        // Instances where both sides know the figure.
        let pairs: Vec<(f64, f64)> = paired
            .iter()
            .filter_map(|id| Some((*a.instances[*id].get(key)?, *b.instances[*id].get(key)?)))
            .collect();
        if pairs.is_empty() {
            totals.push(
                json!({"figure": key, "label": label.trim(), "a": null, "b": null,
                "difference": null, "interval": null, "within_noise": null, "instances": 0}),
            );
            continue;
        }
        let va: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        let vb: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let (sa, sb) = (statistic(key, &va), statistic(key, &vb));
        let ci = interval(key, &pairs, resamples);
        let noise = ci.map(|(lo, hi)| lo <= 0.0 && hi >= 0.0);
        totals.push(json!({
            "figure": key, "label": label.trim(), "a": round(sa), "b": round(sb),
            "difference": round(sb - sa),
            "interval": ci.map(|(lo, hi)| [round(lo), round(hi)]),
            "within_noise": noise,
            "instances": pairs.len(),
        }));
    }
    let total_of = |key: &str, side: &str| -> Option<f64> {
        totals
            .iter()
            .find(|t| t["figure"] == key)
            .and_then(|t| t[side].as_f64())
    };
    let ratio = |num: &str, den: &str, side: &str| -> Value {
        match (total_of(num, side), total_of(den, side)) {
            (Some(n), Some(d)) if d > 0.0 => json!(round(n / d)),
            _ => Value::Null,
        }
    };
    let rates: Vec<Value> = [
        ("list_share", "list_calls", "fs_edit_calls", "fs-edit calls as lists"),
        ("edits_per_call", "edits", "fs_edit_calls", "edits per fs-edit call"),
        ("failure_rate", "fs_edit_failures", "fs_edit_calls", "fs-edit failure rate"),
        ("resend_share", "failed_lists_resent", "failed_lists", "failed lists sent again"),
        ("lone_re_edit_share", "lone_re_edits", "replies", "lone re-edit share of replies"),
        ("prompt_per_request", "prompt_tokens", "requests", "prompt tokens per request"),
    ]
    .iter()
    .map(|(key, num, den, label)| {
        json!({"rate": key, "label": label, "a": ratio(num, den, "a"), "b": ratio(num, den, "b")})
    })
    .collect();
    let instances: Vec<Value> = paired
        .iter()
        .map(|id| {
            let figs: serde_json::Map<String, Value> = FIGURES
                .iter()
                .filter(|(k, _)| *k != "instances")
                .map(|(k, _)| {
                    let get = |s: &Side| s.instances[*id].get(k).map(|v| round(*v));
                    (k.to_string(), json!({"a": get(a), "b": get(b)}))
                })
                .collect();
            json!({"instance_id": id, "figures": figs})
        })
        .collect();
    let runs = |s: &Side| {
        s.runs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    json!({
        "format": "nib-compare-1",
        "a": {"runs": runs(a), "instances": a.instances.len()},
        "b": {"runs": runs(b), "instances": b.instances.len()},
        "paired": paired.len(),
        "only_a": only(a, b),
        "only_b": only(b, a),
        "resamples": resamples,
        "totals": totals,
        "rates": rates,
        "instances": instances,
    })
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn num(v: &Value) -> String {
    match v.as_f64() {
        None => "-".into(),
        Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{}", x as i64),
        Some(x) => format!("{x:.3}"),
    }
}

/// The report as text: totals with differences and intervals, the rates,
/// and per instance the figures that differ.
pub fn render(r: &Value) -> String {
    let mut out = String::new();
    let runs = |s: &Value| {
        s["runs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    let _ = writeln!(
        out,
        "A: {} ({} instances)",
        runs(&r["a"]),
        r["a"]["instances"]
    );
    let _ = writeln!(
        out,
        "B: {} ({} instances)",
        runs(&r["b"]),
        r["b"]["instances"]
    );
    let _ = writeln!(
        out,
        "{} instances in both; 95% intervals from a paired bootstrap ({} resamples, fixed seed)",
        r["paired"], r["resamples"]
    );
    for (key, side) in [("only_a", "A"), ("only_b", "B")] {
        if let Some(ids) = r[key].as_array().filter(|a| !a.is_empty()) {
            let ids: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
            let _ = writeln!(out, "only in {side} (not compared): {}", ids.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\n{:<34} {:>12} {:>12} {:>12}  {:<24} verdict",
        "figure", "A", "B", "B - A", "95% interval"
    );
    for t in r["totals"].as_array().into_iter().flatten() {
        let label = FIGURES
            .iter()
            .find(|(k, _)| t["figure"] == *k)
            .map_or("", |(_, l)| *l);
        let ci = t["interval"]
            .as_array()
            .map(|i| format!("[{}, {}]", num(&i[0]), num(&i[1])))
            .unwrap_or_else(|| "-".into());
        let verdict = match (t["within_noise"].as_bool(), t["a"].is_null()) {
            (_, true) => "not in these logs".to_string(),
            (Some(true), _) => "within noise".to_string(),
            (Some(false), _) => "a real difference".to_string(),
            (None, _) => "too few instances to tell".to_string(),
        };
        let label = if t["figure"] == "resolved" {
            "resolved rate"
        } else {
            label
        };
        let _ = writeln!(
            out,
            "{label:<34} {:>12} {:>12} {:>12}  {ci:<24} {verdict}",
            num(&t["a"]),
            num(&t["b"]),
            num(&t["difference"])
        );
    }
    if let Some(res) = r["totals"].as_array().and_then(|t| t.first())
        && res["within_noise"] == json!(true)
    {
        let _ = writeln!(
            out,
            "\nThe resolved rates differ by {} of {} instances' worth, inside the interval: on this many instances that is noise, not a finding.",
            num(&res["difference"]),
            res["instances"]
        );
    }
    let _ = writeln!(out, "\n{:<34} {:>12} {:>12}", "rate", "A", "B");
    for x in r["rates"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "{:<34} {:>12} {:>12}",
            x["label"].as_str().unwrap_or_default(),
            num(&x["a"]),
            num(&x["b"])
        );
    }
    let _ = writeln!(out, "\nper instance (figures that differ, A -> B):");
    for inst in r["instances"].as_array().into_iter().flatten() {
        let mut diffs = Vec::new();
        for (k, v) in inst["figures"].as_object().into_iter().flatten() {
            if v["a"] != v["b"] {
                diffs.push(format!("{k} {} -> {}", num(&v["a"]), num(&v["b"])));
            }
        }
        let id = inst["instance_id"].as_str().unwrap_or_default();
        if diffs.is_empty() {
            let _ = writeln!(out, "  {id}: the same");
        } else {
            let _ = writeln!(out, "  {id}: {}", diffs.join(", "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side_of(values: &[(&str, f64, f64)]) -> Side {
        Side {
            runs: vec![PathBuf::from("x")],
            instances: values
                .iter()
                .map(|(id, resolved, tokens)| {
                    let mut f = Figures::new();
                    f.insert("resolved", *resolved);
                    f.insert("prompt_tokens", *tokens);
                    (id.to_string(), f)
                })
                .collect(),
        }
    }

    #[test]
    fn a_one_instance_gap_in_many_is_noise_and_a_large_one_is_not() {
        let ids: Vec<String> = (0..121).map(|n| format!("i{n:03}")).collect();
        // 86 against 87 of 121 resolved, differing on a few instances.
        let a: Vec<(&str, f64, f64)> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| (id.as_str(), if n < 86 { 1.0 } else { 0.0 }, 1000.0))
            .collect();
        let b: Vec<(&str, f64, f64)> = ids
            .iter()
            .enumerate()
            .map(|(n, id)| {
                let r = if (3..90).contains(&n) { 1.0 } else { 0.0 };
                (id.as_str(), r, 500.0)
            })
            .collect();
        let r = compare(&side_of(&a), &side_of(&b), 2000);
        let resolved = &r["totals"][0];
        assert_eq!(resolved["figure"], "resolved");
        assert_eq!(resolved["within_noise"], true, "{resolved}");
        let tokens = r["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["figure"] == "prompt_tokens")
            .unwrap();
        assert_eq!(tokens["difference"], -60500.0);
        assert_eq!(tokens["within_noise"], false);
        // The same seed, the same interval.
        assert_eq!(compare(&side_of(&a), &side_of(&b), 2000), r);
        let text = render(&r);
        assert!(text.contains("within noise"), "{text}");
        assert!(text.contains("noise, not a finding"), "{text}");
    }

    #[test]
    fn repeated_runs_pool_to_their_mean() {
        let mut x = Figures::new();
        x.insert("requests", 4.0);
        let mut y = Figures::new();
        y.insert("requests", 6.0);
        y.insert("resolved", 1.0);
        let p = pool(&[x, y]);
        assert_eq!(p["requests"], 5.0);
        assert_eq!(p["resolved"], 1.0);
    }
}
