//! A run's progress on stderr: a board redrawn in place when stderr is a
//! terminal (M/N done, elapsed, ETA, tokens and cost, one line per running
//! instance with its step and last tool, the exit statuses so far), plain
//! lines otherwise (one per instance start and finish, and a summary every
//! so often).
//!
//! What is drawn is a pure function of a [`State`] ([`render`],
//! [`summary_line`]): the workers update the state, a painter thread draws
//! it, and the tests render states to text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ratatui::crossterm::{cursor, queue, terminal};
use unicode_width::UnicodeWidthChar;

use super::status::ExitStatus;

/// What the board shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Instances this run takes (skipped ones not counted).
    pub total: usize,
    pub done: usize,
    /// Already in preds.jsonl, not run.
    pub skipped: usize,
    /// Tokens of finished and running instances.
    pub tokens: u64,
    /// Cost so far; `None` when no price is known for the model.
    pub cost: Option<f64>,
    /// Some token count was nib's estimate, so the cost is too.
    pub estimated: bool,
    pub running: Vec<Running>,
    pub statuses: BTreeMap<ExitStatus, usize>,
    /// Why no new instances start (Ctrl-C, the total cost limit).
    pub draining: Option<String>,
    /// Calls the guard or a confirm refused, in finished and running
    /// instances.
    pub refused_calls: usize,
}

/// One running instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Running {
    pub id: String,
    pub step: u64,
    pub last_tool: Option<String>,
    /// When it started, from the run's start.
    pub since: Duration,
    pub tokens: u64,
    pub cost: Option<f64>,
    /// Calls refused so far in this instance.
    pub refused_calls: usize,
}

/// `1h02m`, `3m06s`, `45s`.
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `950`, `12.3k`, `4.1M`.
pub fn tokens(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `$0.42`, with `~` in front when some tokens were estimated.
pub fn money(cost: f64, estimated: bool) -> String {
    let mark = if estimated { "~" } else { "" };
    if cost < 0.01 && cost > 0.0 {
        format!("{mark}${cost:.4}")
    } else {
        format!("{mark}${cost:.2}")
    }
}

/// The plain summary line: `12/40 done, 1 skipped · 3m06s · eta 7m12s ·
/// 120.4k tokens · $0.42 · submitted 10, step_limit 2`.
pub fn summary_line(state: &State, elapsed: Duration) -> String {
    let mut line = head_line(state, elapsed);
    if !state.statuses.is_empty() {
        let _ = write!(line, " · {}", statuses(state, ", "));
    }
    line
}

/// `submitted 10, step_limit 2`, in the statuses' fixed order.
fn statuses(state: &State, sep: &str) -> String {
    let parts: Vec<String> = state
        .statuses
        .iter()
        .map(|(s, n)| format!("{} {n}", s.as_str()))
        .collect();
    parts.join(sep)
}

/// The summary line without the statuses.
fn head_line(state: &State, elapsed: Duration) -> String {
    let mut line = format!("{}/{} done", state.done, state.total);
    if state.skipped > 0 {
        let _ = write!(line, ", {} skipped", state.skipped);
    }
    let _ = write!(line, " · {}", duration(elapsed));
    let left = state.total.saturating_sub(state.done);
    if state.done > 0 && left > 0 && state.draining.is_none() {
        let eta = elapsed.mul_f64(left as f64 / state.done as f64);
        let _ = write!(line, " · eta {}", duration(eta));
    }
    let _ = write!(line, " · {} tokens", tokens(state.tokens));
    if let Some(cost) = state.cost {
        let _ = write!(line, " · {}", money(cost, state.estimated));
    }
    if state.refused_calls > 0 {
        let _ = write!(line, " · {} refused calls", state.refused_calls);
    }
    line
}

/// The board, each line at most `width` columns.
pub fn render(state: &State, elapsed: Duration, width: usize) -> Vec<String> {
    let mut lines = vec![format!("nib swebench {}", head_line(state, elapsed))];
    let id_width = state.running.iter().map(|r| r.id.len()).max().unwrap_or(0);
    for r in &state.running {
        let mut line = format!(
            "  {:<id_width$}  step {:>3}  {:<12}  {:>7}  {:>7} tokens",
            r.id,
            r.step,
            r.last_tool.as_deref().unwrap_or("-"),
            duration(elapsed.saturating_sub(r.since)),
            tokens(r.tokens),
        );
        if let Some(cost) = r.cost {
            let _ = write!(line, "  {}", money(cost, state.estimated));
        }
        if r.refused_calls > 0 {
            let _ = write!(line, "  {} refused", r.refused_calls);
        }
        lines.push(line);
    }
    if !state.statuses.is_empty() {
        lines.push(format!("  statuses: {}", statuses(state, " · ")));
    }
    if let Some(why) = &state.draining {
        lines.push(format!("  {why}"));
    }
    lines.into_iter().map(|l| fit(&l, width)).collect()
}

/// `line` cut to `width` columns (with `…` when cut).
fn fit(line: &str, width: usize) -> String {
    let cols = |c: char| c.width().unwrap_or(0);
    if line.chars().map(cols).sum::<usize>() <= width {
        return line.to_string();
    }
    let mut used = 0;
    let mut out = String::new();
    for c in line.chars() {
        if used + cols(c) + 1 > width {
            break;
        }
        used += cols(c);
        out.push(c);
    }
    out.push('…');
    out
}

/// The board the workers update, and how it is drawn.
pub struct Board {
    state: Mutex<State>,
    started: Instant,
    tty: bool,
    /// Lines of the board now on screen (terminal mode).
    drawn: Mutex<usize>,
    /// Wakes the painter (a change, or the run's end).
    wake: Condvar,
    over: Mutex<bool>,
    /// Plain mode: how often the summary line is printed.
    every: Duration,
}

impl Board {
    pub fn new(total: usize, skipped: usize, priced: bool, every: Duration) -> Board {
        Board {
            state: Mutex::new(State {
                total,
                skipped,
                cost: priced.then_some(0.0),
                ..State::default()
            }),
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            drawn: Mutex::new(0),
            wake: Condvar::new(),
            over: Mutex::new(false),
            every,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Changes the state (the painter redraws it at its next tick).
    pub fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
    }

    pub fn snapshot(&self) -> State {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A line of the run's log (an instance started or finished, a
    /// notice): above the board in a terminal, else as it is.
    pub fn say(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        if self.tty {
            let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
            clear(&mut err, *drawn);
            *drawn = 0;
        }
        let _ = writeln!(err, "{line}");
        let _ = err.flush();
    }

    /// In a terminal only: an instance start, which the board shows.
    pub fn is_tty(&self) -> bool {
        self.tty
    }

    fn paint(&self) {
        let state = self.snapshot();
        let elapsed = self.elapsed();
        let mut err = std::io::stderr().lock();
        if self.tty {
            // No size (a pseudo-terminal that reports 0): a usual width.
            let width = match terminal::size() {
                Ok((w, _)) if w >= 20 => w as usize,
                _ => 100,
            };
            let lines = render(&state, elapsed, width);
            let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
            clear(&mut err, *drawn);
            for l in &lines {
                let _ = writeln!(err, "{l}");
            }
            *drawn = lines.len();
        } else {
            let _ = writeln!(err, "nib swebench: {}", summary_line(&state, elapsed));
        }
        let _ = err.flush();
    }

    /// Draws until [`Board::finish`]: every 250 ms in a terminal, every
    /// `every` as a plain line otherwise. Run it on a thread of its own.
    pub fn painter(&self) {
        let tick = if self.tty {
            Duration::from_millis(250)
        } else {
            self.every
        };
        let mut over = self.over.lock().unwrap_or_else(PoisonError::into_inner);
        while !*over {
            let (o, _) = self
                .wake
                .wait_timeout(over, tick)
                .unwrap_or_else(PoisonError::into_inner);
            over = o;
            if !*over {
                drop(over);
                self.paint();
                over = self.over.lock().unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    /// Stops the painter and takes the board off the screen (the table
    /// follows on stdout).
    pub fn finish(&self) {
        *self.over.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.wake.notify_all();
        if self.tty {
            let mut err = std::io::stderr().lock();
            let mut drawn = self.drawn.lock().unwrap_or_else(PoisonError::into_inner);
            clear(&mut err, *drawn);
            *drawn = 0;
            let _ = err.flush();
        }
    }
}

/// Moves up over the `lines` drawn and clears them.
fn clear(out: &mut impl std::io::Write, lines: usize) {
    if lines > 0 {
        let up = u16::try_from(lines).unwrap_or(u16::MAX);
        let _ = queue!(out, cursor::MoveToPreviousLine(up));
    }
    let _ = queue!(out, terminal::Clear(terminal::ClearType::FromCursorDown));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> State {
        State {
            total: 10,
            done: 4,
            skipped: 2,
            tokens: 123_456,
            cost: Some(0.4213),
            estimated: false,
            running: vec![
                Running {
                    id: "astropy__astropy-12907".into(),
                    step: 12,
                    last_tool: Some("fs-edit".into()),
                    since: Duration::from_secs(100),
                    tokens: 40_100,
                    cost: Some(0.12),
                    refused_calls: 2,
                },
                Running {
                    id: "sympy__sympy-20590".into(),
                    step: 3,
                    last_tool: None,
                    since: Duration::from_secs(170),
                    tokens: 900,
                    cost: Some(0.004),
                    refused_calls: 0,
                },
            ],
            statuses: BTreeMap::from([(ExitStatus::Submitted, 3), (ExitStatus::StepLimit, 1)]),
            draining: None,
            refused_calls: 3,
        }
    }

    #[test]
    fn the_board_shows_counts_eta_cost_and_each_running_instance() {
        let lines = render(&state(), Duration::from_secs(200), 200);
        assert_eq!(
            lines,
            [
                "nib swebench 4/10 done, 2 skipped · 3m20s · eta 5m00s · 123.5k tokens · $0.42 · 3 refused calls",
                "  astropy__astropy-12907  step  12  fs-edit         1m40s    40.1k tokens  $0.12  2 refused",
                "  sympy__sympy-20590      step   3  -                 30s      900 tokens  $0.0040",
                "  statuses: submitted 3 · step_limit 1",
            ]
        );
        assert_eq!(
            summary_line(&state(), Duration::from_secs(200)),
            "4/10 done, 2 skipped · 3m20s · eta 5m00s · 123.5k tokens · $0.42 · 3 refused calls · submitted 3, step_limit 1"
        );
    }

    #[test]
    fn draining_estimates_and_narrow_terminals() {
        let mut s = state();
        s.draining = Some("Ctrl-C: no new instances start; Ctrl-C again stops now".into());
        s.estimated = true;
        s.cost = None;
        s.running[1].cost = None;
        let lines = render(&s, Duration::from_secs(3700), 50);
        assert_eq!(lines.len(), 5);
        assert!(lines.iter().all(|l| l.chars().count() <= 50), "{lines:#?}");
        assert!(lines[0].starts_with("nib swebench 4/10 done, 2 skipped · 1h01m"));
        assert!(lines[0].ends_with('…'));
        assert!(!lines[0].contains("eta"), "{}", lines[0]);
        assert!(lines[4].starts_with("  Ctrl-C"));
        let wide = render(&s, Duration::from_secs(3700), 300);
        assert!(wide[1].ends_with("~$0.12  2 refused"), "{}", wide[1]);
        assert!(!wide[0].contains('$'), "no price, no cost: {}", wide[0]);
        let empty = State {
            total: 3,
            ..State::default()
        };
        assert_eq!(
            summary_line(&empty, Duration::from_secs(5)),
            "0/3 done · 5s · 0 tokens"
        );
    }
}
