//! What watches one instance's session as it runs: every event and every
//! piece of the model's stream goes through [`Watch`], which counts what
//! the exit status needs ([`Tally`]), builds and rewrites the trajectory,
//! updates the progress board, prices each reply, and stops the session
//! (through its cancel flag) when the cost limit or the format-error limit
//! is reached: once the calls of the reply that reached it have run, so
//! the next model call is never made.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::config::Price;
use super::progress::{Board, Running};
use super::status::{ExitStatus, Tally};
use super::trajectory::{Ending, ModelStats, Trajectory};
use crate::model::StreamEvent;
use crate::session::{Entry, Event};

/// The limits a watch enforces.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub price: Option<Price>,
    /// USD per instance; 0: none.
    pub cost_limit: f64,
    /// Steps in a row with malformed tool calls; 0: none.
    pub max_format_errors: u64,
}

pub struct Watch {
    pub tally: Tally,
    trajectory: Mutex<Trajectory>,
    board: Arc<Board>,
    id: String,
    limits: Limits,
    cancel: Arc<AtomicBool>,
    /// The step under way: its number, its reply's tool calls, the
    /// results seen so far. A limit stops the session once the step's
    /// calls have run (the reply that crossed it is not thrown away).
    step: Mutex<(u64, u64, u64)>,
    stop_after_step: AtomicBool,
}

impl Watch {
    /// Watches instance `id` and puts it on the board as running.
    pub fn new(
        id: &str,
        trajectory: Trajectory,
        board: Arc<Board>,
        limits: Limits,
        cancel: Arc<AtomicBool>,
    ) -> Watch {
        let since = board.elapsed();
        board.update(|s| {
            s.running.push(Running {
                id: id.to_string(),
                step: 0,
                last_tool: None,
                since,
                tokens: 0,
                cost: limits.price.map(|_| 0.0),
                refused_calls: 0,
            });
        });
        if let Err(e) = trajectory.write(None) {
            board.say(&format!("nib swebench: {id}: {e}"));
        }
        Watch {
            tally: Tally::default(),
            trajectory: Mutex::new(trajectory),
            board,
            id: id.to_string(),
            limits,
            cancel,
            step: Mutex::new((0, 0, 0)),
            stop_after_step: AtomicBool::new(false),
        }
    }

    pub fn stream(&self, ev: &StreamEvent) {
        self.trajectory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stream(ev);
    }

    pub fn see(&self, entry: &Entry) {
        self.tally.see(entry);
        let cost = match (&entry.event, self.limits.price) {
            (Event::LlmResp(e), Some(p)) => Some(p.cost(&e.usage)),
            _ => None,
        };
        let stats = {
            let mut t = self
                .trajectory
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if t.see(entry, cost)
                && let Err(e) = t.write(None)
            {
                self.board.say(&format!("nib swebench: {}: {e}", self.id));
            }
            t.stats
        };
        self.board.update(|s| {
            if let Event::LlmResp(e) = &entry.event {
                s.tokens += e.usage.prompt + e.usage.completion;
                s.estimated |= e.usage.estimated;
                if let (Some(total), Some(c)) = (&mut s.cost, cost) {
                    *total += c;
                }
            }
            let refused = matches!(&entry.event, Event::ToolResult(e) if e.refused);
            if refused {
                s.refused_calls += 1;
            }
            if let Some(r) = s.running.iter_mut().find(|r| r.id == self.id) {
                if refused {
                    r.refused_calls += 1;
                }
                match &entry.event {
                    Event::LlmReq(e) => r.step = e.step,
                    Event::ToolCall(e) => r.last_tool = Some(e.name.clone()),
                    _ => {}
                }
                r.tokens = stats.tokens();
                r.cost = stats.cost;
            }
        });
        let step_done = {
            let mut at = self.step.lock().unwrap_or_else(PoisonError::into_inner);
            match &entry.event {
                Event::LlmResp(e) => *at = (e.step, e.tool_calls, 0),
                Event::ToolResult(e) if e.step == at.0 => at.2 += 1,
                _ => {}
            }
            // A request under way already: a result went missing (a call a
            // hook refused logs none), so stop it now.
            matches!(entry.event, Event::LlmReq(_))
                || (at.2 >= at.1 && matches!(entry.event, Event::LlmResp(_) | Event::ToolResult(_)))
        };
        self.enforce(&entry.event, &stats);
        if step_done && self.stop_after_step.load(Ordering::Relaxed) {
            self.cancel.store(true, Ordering::Relaxed);
        }
    }

    fn enforce(&self, event: &Event, stats: &ModelStats) {
        let limits = self.limits;
        let stop = match event {
            Event::LlmResp(_) if limits.cost_limit > 0.0 => {
                stats.cost.filter(|c| *c >= limits.cost_limit).map(|c| {
                    (
                        ExitStatus::CostLimit,
                        format!(
                            "stopped at ${c:.4}: the cost limit (--cost-limit {}) was reached",
                            limits.cost_limit
                        ),
                    )
                })
            }
            Event::ToolCall(_)
                if limits.max_format_errors > 0
                    && self.tally.format_streak() >= limits.max_format_errors =>
            {
                Some((
                    ExitStatus::FormatError,
                    format!(
                        "stopped after {} steps in a row with malformed tool calls (--max-format-errors {})",
                        self.tally.format_streak(),
                        limits.max_format_errors
                    ),
                ))
            }
            _ => None,
        };
        if let Some((status, why)) = stop
            && self.tally.stop(status, why.clone())
        {
            self.trajectory
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .stop_reason = Some(why);
            self.stop_after_step.store(true, Ordering::Relaxed);
        }
    }

    /// The model stats so far.
    pub fn stats(&self) -> ModelStats {
        self.trajectory
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stats
    }

    /// The last write of the trajectory and the log's last line; the
    /// instance leaves the board's running lines.
    pub fn end(&self, ending: &Ending) {
        let mut t = self
            .trajectory
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        t.log_end(&format!("{}: {}", ending.status, ending.message));
        if let Err(e) = t.write(Some(ending)) {
            self.board.say(&format!("nib swebench: {}: {e}", self.id));
        }
        self.board.update(|s| s.running.retain(|r| r.id != self.id));
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.board.update(|s| s.running.retain(|r| r.id != self.id));
    }
}
