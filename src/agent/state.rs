//! What outlives one task of a session: the strategy's session-scoped
//! values (`session-get` / `session-set!`) and the session's model usage.
//!
//! A session's engine is made anew for each task (its Scheme state resets),
//! so what a strategy keeps for the whole session lives here, keyed by the
//! session's id (its event log's), until [`end`] drops it.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::{Map, Value, json};

/// Tokens and calls, summed over model calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt: u64,
    pub cached: u64,
    pub completion: u64,
    /// How many model calls.
    pub calls: u64,
    /// What the priced calls cost, in billionths of a dollar (an integer,
    /// so sums are exact and the type stays `Eq`).
    pub cost_nano_usd: u64,
    /// Calls whose model has no known price (`[prices]`).
    pub unpriced: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.prompt += other.prompt;
        self.cached += other.cached;
        self.completion += other.completion;
        self.calls += other.calls;
        self.cost_nano_usd += other.cost_nano_usd;
        self.unpriced += other.unpriced;
    }

    pub fn total(&self) -> u64 {
        self.prompt + self.completion
    }

    /// As Scheme reads it: `{"prompt", "cached", "completion", "total",
    /// "calls", "cost_usd", "unpriced_calls"}`; `cost_usd` is `#f` when
    /// no call had a known price, and counts only the priced ones.
    pub fn to_json(self) -> Value {
        let priced = self.calls > self.unpriced;
        json!({
            "prompt": self.prompt,
            "cached": self.cached,
            "completion": self.completion,
            "total": self.total(),
            "calls": self.calls,
            "cost_usd": if priced { json!(self.cost_nano_usd as f64 / 1e9) } else { json!(false) },
            "unpriced_calls": self.unpriced,
        })
    }
}

#[derive(Default)]
struct SessionState {
    values: Map<String, Value>,
    usage: Usage,
    tasks: u64,
}

/// The most values a session may keep, so a strategy cannot grow the
/// host without bound.
const MAX_VALUES: usize = 10_000;

fn sessions() -> std::sync::MutexGuard<'static, HashMap<String, SessionState>> {
    static SESSIONS: OnceLock<Mutex<HashMap<String, SessionState>>> = OnceLock::new();
    SESSIONS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The session-scoped value under `key`, if any.
pub fn get(session: &str, key: &str) -> Option<Value> {
    sessions()
        .get(session)
        .and_then(|s| s.values.get(key).cloned())
}

/// Keep `value` under `key` for the rest of the session.
pub fn set(session: &str, key: &str, value: Value) -> Result<(), String> {
    let mut all = sessions();
    let state = all.entry(session.to_string()).or_default();
    if state.values.len() >= MAX_VALUES && !state.values.contains_key(key) {
        return Err(format!(
            "a session keeps at most {MAX_VALUES} values; reuse keys"
        ));
    }
    state.values.insert(key.to_string(), value);
    Ok(())
}

/// Adds one model call's usage to the session's.
pub fn add_usage(session: &str, usage: &Usage) {
    sessions()
        .entry(session.to_string())
        .or_default()
        .usage
        .add(usage);
}

/// The session's usage so far, over all its tasks.
pub fn usage(session: &str) -> Usage {
    sessions().get(session).map(|s| s.usage).unwrap_or_default()
}

/// Counts a task of the session; returns how many it has had.
pub fn task_started(session: &str) -> u64 {
    let mut all = sessions();
    let state = all.entry(session.to_string()).or_default();
    state.tasks += 1;
    state.tasks
}

/// How many tasks the session has had.
pub fn tasks(session: &str) -> u64 {
    sessions().get(session).map_or(0, |s| s.tasks)
}

/// Forget the session.
pub fn end(session: &str) {
    sessions().remove(session);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_usage_are_kept_per_session() {
        set("s1", "k", json!(3)).unwrap();
        assert_eq!(get("s1", "k"), Some(json!(3)));
        assert_eq!(get("s2", "k"), None);
        let u = Usage {
            prompt: 10,
            cached: 2,
            completion: 5,
            calls: 1,
            cost_nano_usd: 1_500,
            unpriced: 0,
        };
        add_usage("s1", &u);
        add_usage(
            "s1",
            &Usage {
                unpriced: 1,
                cost_nano_usd: 0,
                ..u
            },
        );
        assert_eq!(usage("s1").total(), 30);
        assert_eq!(usage("s1").calls, 2);
        let seen = usage("s1").to_json();
        assert_eq!(seen["cost_usd"], json!(1.5e-6));
        assert_eq!(seen["unpriced_calls"], json!(1));
        end("s1");
        assert_eq!(get("s1", "k"), None);
        assert_eq!(usage("s1"), Usage::default());
    }
}
