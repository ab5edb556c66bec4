//! What the host procedures of one run share: the model clients, the
//! counters, the tools each model call offered, a hook's request to stop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde_json::Value;

use super::state::{self, Usage};
use crate::model::{Client, ModelError, Reply, Request, StreamEvent};
use crate::prim::Host;
use crate::session::EventLog;

/// Where the model's stream events go as they arrive (a client's view).
pub(super) type StreamSink = Box<dyn FnMut(&StreamEvent) + Send>;

/// What the host procedures of one run share.
pub(super) struct Shared {
    pub(super) client: Client,
    /// Clients for other models a strategy asked for (`"model"`), by name.
    pub(super) other_clients: Mutex<HashMap<String, Client>>,
    /// When the run must be over (other clients get it too).
    pub(super) deadline_at: Option<Instant>,
    pub(super) host: Arc<Host>,
    pub(super) log: Arc<EventLog>,
    pub(super) system: String,
    pub(super) tools: Vec<Value>,
    pub(super) max_tokens: u64,
    /// This task's usage, over every model call (the strategy's own too).
    pub(super) usage: Mutex<Usage>,
    pub(super) refused_confirms: AtomicUsize,
    pub(super) on_stream: Mutex<StreamSink>,
    /// The last error logged, so the run's end does not log it again.
    pub(super) last_error: Mutex<String>,
    /// Set by a client (Esc in the terminal client): see
    /// [`run_task_with`](super::run_task_with).
    pub(super) cancel: Arc<AtomicBool>,
    /// The strategy's settings (`--set key=value`).
    pub(super) settings: Vec<(String, String)>,
    /// Set (before `cancel`) when the run's own deadline stopped it.
    pub(super) timed_out: Arc<AtomicBool>,
    /// The task, as the user gave it.
    pub(super) task: String,
    /// The highest step a model call was made for.
    pub(super) step: AtomicU64,
    /// The tools each model call offered, by the id of each call it made:
    /// a call to a tool not offered is refused.
    pub(super) offered: Mutex<HashMap<String, Vec<String>>>,
    /// A hook's `(stop status message)`.
    pub(super) stop: Mutex<Option<(String, String)>>,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn session_id(&self) -> &str {
        self.log.id()
    }

    /// Tokens this task used.
    pub(super) fn tokens(&self) -> u64 {
        lock(&self.usage).total()
    }

    /// One model call on the session's model, or on `model` when a
    /// strategy named another.
    pub(super) fn reply_with(
        &self,
        model: Option<&str>,
        temperature: Option<f32>,
        request: &Request,
        on_event: &mut dyn FnMut(&StreamEvent),
    ) -> Result<Reply, ModelError> {
        let same_model = model.is_none_or(|m| m == self.client.config().model);
        if same_model && temperature.is_none() {
            return self.client.reply(request, on_event);
        }
        let name = model.unwrap_or(&self.client.config().model).to_string();
        let key = format!("{name}\u{0}{temperature:?}");
        let mut clients = lock(&self.other_clients);
        if !clients.contains_key(&key) {
            let mut cfg = self.client.config().clone();
            cfg.model = name;
            if temperature.is_some() {
                cfg.temperature = temperature;
            }
            let mut client = Client::new(cfg)?;
            client.set_cancel(Arc::clone(&self.cancel));
            client.set_deadline(self.deadline_at);
            clients.insert(key.clone(), client);
        }
        match clients.get(&key) {
            Some(client) => client.reply(request, on_event),
            None => self.client.reply(request, on_event),
        }
    }

    /// Adds a reply's usage (and its cost, when its model's price is
    /// known) to the task's and the session's.
    pub(super) fn count_usage(&self, prompt: u64, cached: u64, completion: u64, cost: Option<f64>) {
        let u = Usage {
            prompt,
            cached,
            completion,
            calls: 1,
            cost_nano_usd: cost.map_or(0, |c| (c * 1e9).round() as u64),
            unpriced: u64::from(cost.is_none()),
        };
        lock(&self.usage).add(&u);
        state::add_usage(self.session_id(), &u);
    }

    /// Remembers what a reply's calls were offered.
    pub(super) fn remember_offer(&self, reply: &Reply, tools: &[Value]) {
        let names: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str).map(String::from))
            .collect();
        let mut offered = lock(&self.offered);
        for c in reply.tool_calls.iter().filter(|c| !c.id.is_empty()) {
            offered.insert(c.id.clone(), names.clone());
        }
    }

    /// Why a call may not run, when its model call did not offer its tool.
    pub(super) fn not_offered(&self, id: &str, name: &str) -> Option<String> {
        let offered = lock(&self.offered);
        let names = offered.get(id)?;
        if names.iter().any(|n| n == name) {
            return None;
        }
        Some(if names.is_empty() {
            format!("`{name}` was not offered: no tools are offered at this point; answer in text")
        } else {
            format!(
                "`{name}` was not offered at this point; the tools offered are: {}",
                names.join(", ")
            )
        })
    }

    pub(super) fn note_step(&self, step: u64) {
        self.step.fetch_max(step, Ordering::Relaxed);
    }
}

/// What a strategy may ask of one model call (the third argument of
/// `model-reply`): unknown keys are an error, not ignored.
#[derive(Debug, Default)]
pub(super) struct CallOptions {
    /// Only these tools (by name) are offered.
    pub(super) tools: Option<Vec<String>>,
    /// Replaces the session's system prompt.
    pub(super) system: Option<String>,
    /// Appended to it.
    pub(super) system_extra: Option<String>,
    /// Not streamed to the person watching.
    pub(super) quiet: bool,
    /// This call's output token limit.
    pub(super) max_tokens: Option<u32>,
    /// Another model of the session's provider (a cheaper one for a
    /// summary or a review).
    pub(super) model: Option<String>,
    /// This call's sampling temperature.
    pub(super) temperature: Option<f32>,
}

impl CallOptions {
    const KEYS: [&'static str; 7] = [
        "tools",
        "system",
        "system_extra",
        "quiet",
        "max_tokens",
        "model",
        "temperature",
    ];

    pub(super) fn parse(value: Option<&Value>) -> Result<CallOptions, String> {
        let mut out = CallOptions::default();
        // An empty association list is an empty list to JSON.
        let Some(value) =
            value.filter(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
        else {
            return Ok(out);
        };
        let Value::Object(map) = value else {
            return Err("the options (third argument) must be an association list, e.g. (json-object \"quiet\" #t)".into());
        };
        for (key, v) in map {
            match key.as_str() {
                "tools" => {
                    let names = v
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(String::from)
                                .collect()
                        })
                        .ok_or("option `tools` must be a list of tool names")?;
                    out.tools = Some(names);
                }
                "system" => {
                    out.system = Some(v.as_str().ok_or("option `system` must be a string")?.into())
                }
                "system_extra" => {
                    out.system_extra = Some(
                        v.as_str()
                            .ok_or("option `system_extra` must be a string")?
                            .into(),
                    )
                }
                "quiet" => out.quiet = v.as_bool().ok_or("option `quiet` must be #t or #f")?,
                "max_tokens" => {
                    let n = v
                        .as_u64()
                        .filter(|n| *n > 0)
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or("option `max_tokens` must be a positive integer")?;
                    out.max_tokens = Some(n);
                }
                "model" => {
                    let m = v.as_str().filter(|m| !m.trim().is_empty());
                    out.model = Some(m.ok_or("option `model` must be a model name")?.into());
                }
                "temperature" => {
                    let t = v.as_f64().filter(|t| (0.0..=2.0).contains(t));
                    out.temperature =
                        Some(t.ok_or("option `temperature` must be a number from 0 to 2")? as f32);
                }
                other => {
                    return Err(format!(
                        "unknown option `{other}`; the options are {}",
                        CallOptions::KEYS.join(", ")
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// The cost of a reply's usage on `model` in USD, by the user's `[prices]`
/// over the built-in table (`settings::prices`); `None` when its price is
/// unknown. The user's config is read once per process: the clients read
/// the same file for the totals they show.
pub(super) fn cost_of(model: &str, usage: &crate::model::Usage) -> Option<f64> {
    static PRICES: std::sync::OnceLock<std::collections::BTreeMap<String, Vec<f64>>> =
        std::sync::OnceLock::new();
    let prices = PRICES.get_or_init(|| {
        crate::settings::UserConfig::load()
            .map(|c| c.prices)
            .unwrap_or_default()
    });
    let usage = crate::session::event::Usage {
        prompt: usage.prompt_tokens,
        cached: usage.cached_tokens,
        completion: usage.completion_tokens,
        ..Default::default()
    };
    crate::settings::prices::cost_of(prices, model, &usage)
}
