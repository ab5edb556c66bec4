//! What `nib exec` tells the person on stderr while it runs: a line per
//! event they follow (each model step, tool call and result, notices,
//! warnings, the one error), a heartbeat when nothing was said for a few
//! seconds (a slow server thinking, a long command), and the run's token
//! and cost totals for its last line and its `result` event.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::model::show_tokens;
use crate::session::event::{Event, Usage};
use crate::session::resume::add_usage;
use crate::settings::prices::cost_of;
use crate::settings::stop;

/// How long stderr may stay silent while something runs.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// What the run is doing, for the heartbeat, and what it used so far.
#[derive(Debug)]
pub struct Tally {
    /// What is running and since when (`None` between steps).
    busy: Option<(String, Instant)>,
    /// When the last line went to stderr.
    said: Instant,
    /// Characters of the reply streamed in the current model call.
    streamed: usize,
    pub usage: Usage,
    /// Model replies so far.
    pub steps: u64,
    /// The cost so far; `None` once a reply's model had no price.
    pub cost: Option<f64>,
    prices: BTreeMap<String, Vec<f64>>,
    estimate_said: bool,
    /// The run ended (or a signal came): errors that follow are the stop's
    /// echo, not news.
    pub stopping: Arc<AtomicBool>,
    /// Set when the run's --timeout passed (the host's deadline flag).
    pub deadline: Arc<AtomicBool>,
}

impl Tally {
    /// A tally for a run of `model`: its cost is `None` from the start
    /// when the model has no price.
    pub fn new(prices: BTreeMap<String, Vec<f64>>, model: &str) -> Tally {
        let priced = cost_of(&prices, model, &Usage::default()).is_some();
        Tally {
            busy: None,
            said: Instant::now(),
            streamed: 0,
            usage: Usage::default(),
            steps: 0,
            cost: priced.then_some(0.0),
            prices,
            estimate_said: false,
            stopping: Arc::new(AtomicBool::new(false)),
            deadline: Arc::new(AtomicBool::new(false)),
        }
    }
}

pub type Shared = Arc<Mutex<Tally>>;

fn lock(t: &Shared) -> std::sync::MutexGuard<'_, Tally> {
    t.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `n thing` / `n things`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The line for one event, updating the tally; `None` for events a person
/// does not follow.
pub fn line(tally: &Shared, event: &Event) -> Option<String> {
    let mut t = lock(tally);
    let line = match event {
        Event::LlmReq(e) => {
            t.busy = Some((
                format!("waiting for the model (step {})", e.step),
                Instant::now(),
            ));
            t.streamed = 0;
            return None;
        }
        Event::LlmResp(e) => {
            t.busy = None;
            t.steps += 1;
            add_usage(&mut t.usage, &e.usage);
            let cost = cost_of(&t.prices, &e.model, &e.usage);
            t.cost = match (t.cost, cost) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
            let calls = match e.tool_calls {
                0 => "an answer".to_string(),
                n => plural(n, "tool call", "tool calls"),
            };
            let mut line = format!(
                "step {}: {calls}, {} prompt tokens",
                e.step,
                show_tokens(e.usage.prompt, e.usage.estimated)
            );
            if e.usage.estimated && !t.estimate_said {
                t.estimate_said = true;
                line.push_str(" (~: estimated, the server reported none)");
            }
            line
        }
        Event::ToolCall(e) => {
            let form = &e.positional;
            let shown: String = form.chars().take(120).collect();
            let cut = if form.chars().count() > 120 {
                " …"
            } else {
                ""
            };
            let shown = if shown.is_empty() { &e.name } else { &shown };
            t.busy = Some((format!("running {}", e.name), Instant::now()));
            format!("  {shown}{cut}")
        }
        Event::ToolResult(e) => {
            t.busy = None;
            let mark = if e.ok {
                "ok"
            } else if e.refused {
                "refused"
            } else {
                "failed"
            };
            match stop::received() {
                // The shell says "the user" and "Esc": a signal stopped it.
                Some(sig) if e.summary.starts_with("the user interrupted") => {
                    format!("    stopped: {}", stop::describe(sig))
                }
                _ if t.deadline.load(Ordering::Relaxed) && e.kind.as_deref() == Some("timed_out") => {
                    "    stopped: the run's time limit ran out; it was stopped with everything it started".to_string()
                }
                _ => format!("    {mark}: {}", e.summary),
            }
        }
        // Once stopping, the error is the stop itself, said by its own line.
        Event::Error(_)
            if t.stopping.load(Ordering::Relaxed)
                || t.deadline.load(Ordering::Relaxed)
                || stop::received().is_some() =>
        {
            return None;
        }
        Event::Error(e) => format!("error: {}", e.message),
        Event::Warning(e) => format!("warning: {}", e.message),
        Event::Notice(e) => format!("note: {}", e.message),
        Event::Strategy(e) if e.action == "say" || e.action == "display" => {
            format!("strategy: {}", e.text)
        }
        Event::Strategy(e) => format!("strategy {}: {}", e.action, e.text),
        _ => return None,
    };
    t.said = Instant::now();
    Some(line)
}

/// A model stream's text arrived: the heartbeat says how much.
pub fn streamed(tally: &Shared, chars: usize) {
    lock(tally).streamed += chars;
}

/// Print a heartbeat line on stderr whenever [`HEARTBEAT`] passed with
/// nothing said while a step runs; until `over` is set.
/// What the run waits for now, for the heartbeat (a line was just said
/// about it, so the next heartbeat comes a full period later).
pub fn busy(tally: &Shared, what: String) {
    let mut t = lock(tally);
    t.busy = Some((what, Instant::now()));
    t.said = Instant::now();
}

/// Nothing to wait for that a heartbeat could name.
pub fn idle(tally: &Shared) {
    lock(tally).busy = None;
}

pub fn heartbeat(tally: Shared, over: Arc<AtomicBool>) {
    let _ = std::thread::Builder::new()
        .name("nib-heartbeat".into())
        .spawn(move || {
            while !over.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let mut t = lock(&tally);
                if t.said.elapsed() < HEARTBEAT || t.stopping.load(Ordering::Relaxed) {
                    continue;
                }
                let Some((what, since)) = t.busy.clone() else {
                    continue;
                };
                let secs = since.elapsed().as_secs();
                let got = match t.streamed {
                    0 if what.starts_with("waiting for the model") => {
                        ", nothing received yet".to_string()
                    }
                    0 => String::new(),
                    n => format!(", {n} characters received"),
                };
                t.said = Instant::now();
                drop(t);
                eprintln!("  … still {what}: {secs} s{got}");
            }
        });
}
