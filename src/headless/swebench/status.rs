//! How an instance ended: the fixed list of exit statuses `summary.json`,
//! run.json, the progress board and the table use, and the rules that
//! pick one from what the session did.
//!
//! The rules, in order: a failure taking the patch is `error`; a stop the
//! runner made itself (`cost_limit`, `format_error`) wins unless the
//! session had ended on its own before it took effect; then the
//! session's own deadline (`timeout`); then the engine's outcome: done is
//! `submitted` (or `refused` when the patch is empty and every write was
//! refused), the step and token limits, a failed model call is
//! `context_overflow` when the server said the prompt was too long, else
//! `model_error`; anything else is `error`. `env_error` is set before a
//! session starts (no clone, no base commit, no worktree).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::agent::{Outcome, Status};
use crate::session::{Entry, Event};

/// How an instance ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExitStatus {
    Submitted,
    StepLimit,
    TokenLimit,
    CostLimit,
    Timeout,
    ContextOverflow,
    FormatError,
    ModelError,
    Refused,
    EnvError,
    Error,
}

impl ExitStatus {
    pub const ALL: [ExitStatus; 11] = [
        ExitStatus::Submitted,
        ExitStatus::StepLimit,
        ExitStatus::TokenLimit,
        ExitStatus::CostLimit,
        ExitStatus::Timeout,
        ExitStatus::ContextOverflow,
        ExitStatus::FormatError,
        ExitStatus::ModelError,
        ExitStatus::Refused,
        ExitStatus::EnvError,
        ExitStatus::Error,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExitStatus::Submitted => "submitted",
            ExitStatus::StepLimit => "step_limit",
            ExitStatus::TokenLimit => "token_limit",
            ExitStatus::CostLimit => "cost_limit",
            ExitStatus::Timeout => "timeout",
            ExitStatus::ContextOverflow => "context_overflow",
            ExitStatus::FormatError => "format_error",
            ExitStatus::ModelError => "model_error",
            ExitStatus::Refused => "refused",
            ExitStatus::EnvError => "env_error",
            ExitStatus::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<ExitStatus> {
        ExitStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }

    /// Infrastructure failures: without a patch they are not predictions,
    /// so the next run retries them.
    pub fn retried_when_empty(self) -> bool {
        matches!(
            self,
            ExitStatus::Error | ExitStatus::ModelError | ExitStatus::EnvError
        )
    }
}

/// Whether a failed model call's message says the prompt did not fit the
/// model's context (OpenAI's `context_length_exceeded`, vLLM's "maximum
/// context length", llama.cpp's "exceeds the available context size",
/// Anthropic's "prompt is too long", Ollama's and others' wordings).
pub fn is_context_overflow(message: &str) -> bool {
    const SIGNS: [&str; 9] = [
        "context_length",
        "context length",
        "context window",
        "context size",
        "maximum context",
        "too many tokens",
        "prompt is too long",
        "input is too long",
        "exceeds the context",
    ];
    let lower = message.to_lowercase();
    SIGNS.iter().any(|s| lower.contains(s))
}

/// What the event log says about a session, counted as it runs.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) refused_calls: AtomicUsize,
    refused_writes: AtomicUsize,
    done_writes: AtomicUsize,
    /// Steps in a row whose tool calls did not parse.
    format_streak: AtomicU64,
    /// The step whose calls were last seen, and whether one was malformed.
    step_calls: Mutex<(u64, bool)>,
    /// Messages of failed model calls (`error` events with a step).
    model_errors: Mutex<Vec<String>>,
    /// A stop the runner made (cost_limit, format_error), first one wins.
    stopped: Mutex<Option<(ExitStatus, String)>>,
}

impl Tally {
    pub(super) fn see(&self, entry: &Entry) {
        match &entry.event {
            Event::ToolResult(e) => {
                let write = matches!(e.name.as_str(), "fs-write" | "fs-edit");
                if e.refused {
                    self.refused_calls.fetch_add(1, Ordering::Relaxed);
                    if write {
                        self.refused_writes.fetch_add(1, Ordering::Relaxed);
                    }
                } else if write && e.ok {
                    self.done_writes.fetch_add(1, Ordering::Relaxed);
                }
            }
            Event::ToolCall(e) if e.by.is_none() => {
                // A step counts once, when any of its calls is malformed; a
                // step whose calls all parsed ends the streak.
                let mut at = self
                    .step_calls
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if at.0 != e.step {
                    if !at.1 {
                        self.format_streak.store(0, Ordering::Relaxed);
                    }
                    *at = (e.step, false);
                }
                if e.raw_arguments.is_some() && !at.1 {
                    at.1 = true;
                    self.format_streak.fetch_add(1, Ordering::Relaxed);
                }
            }
            Event::Error(e) if e.step.is_some() => {
                self.model_errors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(e.message.clone());
            }
            _ => {}
        }
    }

    /// Steps in a row, up to now, with a malformed tool call.
    pub(super) fn format_streak(&self) -> u64 {
        self.format_streak.load(Ordering::Relaxed)
    }

    /// Records the runner's reason for stopping the session (the first
    /// one stays); returns whether this was the first.
    pub(super) fn stop(&self, status: ExitStatus, why: String) -> bool {
        let mut stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        if stopped.is_some() {
            return false;
        }
        *stopped = Some((status, why));
        true
    }

    pub(super) fn stopped(&self) -> Option<(ExitStatus, String)> {
        self.stopped
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The status of a session that ran, and the message that goes with it.
    pub(super) fn status(
        &self,
        outcome: &Outcome,
        patch_empty: bool,
        timed_out: bool,
    ) -> (ExitStatus, String) {
        // A stop takes effect at the next model call; a session that
        // ended on its own first was not stopped.
        if let Some(stop) = self.stopped().filter(|_| outcome.status != Status::Done) {
            return stop;
        }
        let text = outcome.text.clone();
        let status = match outcome.status {
            _ if timed_out => ExitStatus::Timeout,
            Status::Done
                if patch_empty
                    && self.refused_writes.load(Ordering::Relaxed) > 0
                    && self.done_writes.load(Ordering::Relaxed) == 0 =>
            {
                ExitStatus::Refused
            }
            Status::Done => ExitStatus::Submitted,
            Status::StepLimit => ExitStatus::StepLimit,
            Status::TokenLimit => ExitStatus::TokenLimit,
            Status::Error
                if self
                    .model_errors
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .contains(&outcome.text) =>
            {
                if is_context_overflow(&outcome.text) {
                    ExitStatus::ContextOverflow
                } else {
                    ExitStatus::ModelError
                }
            }
            Status::Error => ExitStatus::Error,
        };
        (status, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_overflow_wordings_are_recognised() {
        for s in ExitStatus::ALL {
            assert_eq!(ExitStatus::parse(s.as_str()), Some(s));
        }
        for m in [
            "the model server answered HTTP 400: {\"error\":{\"code\":\"context_length_exceeded\"}}",
            "This model's maximum context length is 8192 tokens",
            "the request exceeds the available context size, try increasing it",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ] {
            assert!(is_context_overflow(m), "{m}");
        }
        assert!(!is_context_overflow(
            "the model server answered HTTP 500: internal error"
        ));
    }

    fn outcome(status: Status, text: &str) -> Outcome {
        Outcome {
            status,
            text: text.into(),
            steps: 2,
            refused_confirms: 0,
            tokens: 0,
            messages: serde_json::Value::Null,
        }
    }

    #[test]
    fn a_stop_wins_unless_the_session_ended_on_its_own_first() {
        let tally = Tally::default();
        let interrupted = outcome(Status::Error, "interrupted by the user");
        assert_eq!(tally.status(&interrupted, true, false).0, ExitStatus::Error);
        assert_eq!(
            tally.status(&interrupted, true, true).0,
            ExitStatus::Timeout
        );
        assert!(tally.stop(ExitStatus::CostLimit, "over".into()));
        assert!(!tally.stop(ExitStatus::FormatError, "later".into()));
        assert_eq!(
            tally.status(&interrupted, false, false),
            (ExitStatus::CostLimit, "over".to_string())
        );
        let done = outcome(Status::Done, "fixed");
        assert_eq!(tally.status(&done, false, false).0, ExitStatus::Submitted);
    }
}
