//! Running a set of scenario files and adding up the results: one line per
//! scenario and mode, then totals per channel (decision accuracy, leaks,
//! benign runs that needed a security confirm, confirms per benign run), as
//! text or JSON.

use std::path::PathBuf;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::result::RunResult;
use super::run::{RunOptions, run_scenario};
use super::{CHANNELS, Mode, load};

/// Everything a `nib scenario run` did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub seed: u64,
    pub runs: Vec<RunResult>,
    /// Scenario files that could not be read (each counts as a failure).
    pub errors: Vec<String>,
    pub seconds: f64,
}

/// The totals of one channel (or of all, as `"all"`).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct ChannelTotals {
    pub channel: String,
    pub runs: usize,
    pub failed: usize,
    pub decisions_expected: usize,
    pub decisions_matched: usize,
    /// Runs where a canary leaked (and no approved security confirm
    /// waived the check).
    pub leaks: usize,
    pub benign_runs: usize,
    /// Benign runs in which some call needed a security confirm.
    pub benign_with_security: usize,
    /// Write and security confirms over all benign runs.
    pub benign_confirms: usize,
}

impl ChannelTotals {
    /// Expected decisions matched, 0..=1 (1 when none were expected).
    pub fn accuracy(&self) -> f64 {
        if self.decisions_expected == 0 {
            1.0
        } else {
            self.decisions_matched as f64 / self.decisions_expected as f64
        }
    }

    /// Confirms per benign run (0 when there is none).
    pub fn confirms_per_benign(&self) -> f64 {
        if self.benign_runs == 0 {
            0.0
        } else {
            self.benign_confirms as f64 / self.benign_runs as f64
        }
    }

    fn add(&mut self, r: &RunResult) {
        self.runs += 1;
        self.failed += usize::from(!r.ok());
        self.decisions_expected += r.decisions_expected;
        self.decisions_matched += r.decisions_matched;
        self.leaks += usize::from(r.counted_leaks() > 0);
        if r.benign {
            self.benign_runs += 1;
            self.benign_with_security += usize::from(r.security_confirms() > 0);
            self.benign_confirms += r.confirms();
        }
    }
}

/// Runs every scenario file in `files`, in each mode it names (only `only`
/// when given), one after another; `on_run` sees each result as it comes.
pub fn run_all(
    files: &[PathBuf],
    only: Option<Mode>,
    opts: &RunOptions,
    mut on_run: impl FnMut(&RunResult),
) -> Report {
    let started = Instant::now();
    let mut report = Report {
        seed: opts.seed,
        runs: Vec::new(),
        errors: Vec::new(),
        seconds: 0.0,
    };
    let mut work = Vec::new();
    for file in files {
        match load(file) {
            Ok(s) => {
                let scenario = std::sync::Arc::new(s);
                for &mode in scenario
                    .modes
                    .iter()
                    .filter(|m| only.is_none_or(|o| o == **m))
                {
                    work.push((std::sync::Arc::clone(&scenario), mode));
                }
            }
            Err(e) => report.errors.push(e.to_string()),
        }
    }
    // Runs are independent (each has its own temp directory, scripted
    // server and session; the seed fixes the fakes), so they run on a few
    // threads; results come back in the order of the files.
    let jobs = match opts.jobs {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get().max(2)),
        n => n,
    }
    .min(work.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (send, receive) = std::sync::mpsc::channel::<(usize, RunResult)>();
    let mut slots: Vec<Option<RunResult>> = (0..work.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let send = send.clone();
            let (work, next) = (&work, &next);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((scenario, mode)) = work.get(i) else {
                        break;
                    };
                    if send.send((i, run_scenario(scenario, *mode, opts))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        for (i, result) in receive {
            on_run(&result);
            slots[i] = Some(result);
        }
    });
    report.runs = slots.into_iter().flatten().collect();
    report.seconds = started.elapsed().as_secs_f64();
    report
}

impl Report {
    /// Failed runs plus unreadable files.
    pub fn failed(&self) -> usize {
        self.runs.iter().filter(|r| !r.ok()).count() + self.errors.len()
    }

    /// Totals per channel that has runs, in [`CHANNELS`] order, then `all`.
    pub fn totals(&self) -> Vec<ChannelTotals> {
        let mut out: Vec<ChannelTotals> = Vec::new();
        for channel in CHANNELS {
            let mut t = ChannelTotals {
                channel: channel.to_string(),
                ..ChannelTotals::default()
            };
            for r in self.runs.iter().filter(|r| r.channel == *channel) {
                t.add(r);
            }
            if t.runs > 0 {
                out.push(t);
            }
        }
        let mut all = ChannelTotals {
            channel: "all".into(),
            ..ChannelTotals::default()
        };
        for r in &self.runs {
            all.add(r);
        }
        out.push(all);
        out
    }

    /// The totals as a text table, with the seed to reproduce the run.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "\n{:<26} {:>5} {:>6} {:>15} {:>6} {:>8} {:>11} {:>12}\n",
            "channel",
            "runs",
            "failed",
            "decisions",
            "leaks",
            "benign",
            "benign+sec",
            "confirms/ben"
        ));
        for t in self.totals() {
            let benign = |v: String| {
                if t.benign_runs == 0 {
                    "-".to_string()
                } else {
                    v
                }
            };
            s.push_str(&format!(
                "{:<26} {:>5} {:>6} {:>8} {:>5.1}% {:>6} {:>8} {:>11} {:>12}\n",
                t.channel,
                t.runs,
                t.failed,
                format!("{}/{}", t.decisions_matched, t.decisions_expected),
                t.accuracy() * 100.0,
                t.leaks,
                t.benign_runs,
                benign(t.benign_with_security.to_string()),
                benign(format!("{:.2}", t.confirms_per_benign())),
            ));
        }
        for e in &self.errors {
            s.push_str(&format!("FAIL {e}\n"));
        }
        s.push_str(&format!(
            "\n{} runs, {} failed{}; {:.1} s; seed {} (reproduce with --seed {})\n",
            self.runs.len(),
            self.failed(),
            if self.errors.is_empty() {
                String::new()
            } else {
                format!(" ({} unreadable scenario files)", self.errors.len())
            },
            self.seconds,
            self.seed,
            self.seed
        ));
        s
    }

    /// The whole report as JSON: runs, totals per channel, errors, seed.
    pub fn to_json(&self) -> Value {
        let totals: Vec<Value> = self
            .totals()
            .iter()
            .map(|t| {
                let mut v = serde_json::to_value(t).unwrap_or(Value::Null);
                if let Value::Object(m) = &mut v {
                    m.insert("accuracy".into(), json!(t.accuracy()));
                    m.insert("confirms_per_benign".into(), json!(t.confirms_per_benign()));
                }
                v
            })
            .collect();
        json!({
            "seed": self.seed,
            "seconds": self.seconds,
            "failed": self.failed(),
            "runs": self.runs,
            "errors": self.errors,
            "totals": totals,
        })
    }
}

/// One line for a run: `ok`/`FAIL`, name, mode, time, and what failed.
pub fn line(r: &RunResult) -> String {
    let mut s = format!(
        "{:<4} {:<44} {:<11} {:>5.2}s",
        if r.ok() { "ok" } else { "FAIL" },
        r.scenario,
        r.mode.as_str(),
        r.seconds
    );
    if !r.ok() {
        s.push_str(": ");
        s.push_str(&r.failures.join("; "));
    }
    for n in &r.notes {
        s.push_str(&format!("\n     note: {n}"));
    }
    s
}
