//! What a run reports: an instance's `summary.json`, the run's `run.json`
//! and the table on stdout.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::RunArgs;
use super::instances::{Instance, Shard};
use super::plan::Settings;
use super::progress::money;
use super::result::InstanceResult;
use super::status::ExitStatus;
use crate::settings::ModelChoice;

/// The run's settings: run.json's head, and each trajectory's `config`.
pub(super) fn settings_json(
    settings: &Settings,
    args: &RunArgs,
    instances_file: &Path,
    concurrency: usize,
) -> Value {
    let (provider, model) = match &settings.model {
        ModelChoice::Remote(cfg) => (cfg.provider.as_str().to_string(), cfg.model.clone()),
        ModelChoice::Scripted { spec, .. } => ("scripted".to_string(), spec.clone()),
    };
    let price = settings.limits.price.map(|p| {
        json!({"model": settings.model_label, "input": p.input, "output": p.output, "cached": p.cached})
    });
    json!({
        "nib_version": env!("CARGO_PKG_VERSION"),
        "model_name_or_path": settings.name,
        "provider": provider,
        "model": model,
        "strategy": settings.strategy.as_ref().map_or("default".into(), |p| p.display().to_string()),
        "hooks": settings.hooks.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "set": settings.settings.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "prompt": args.prompt.as_ref().map_or("default".into(), |p| p.display().to_string()),
        "instances_file": instances_file.display().to_string(),
        "shard": args.shard.map(|s: Shard| s.to_string()),
        "only": args.only,
        "filter": args.filter,
        "shuffle_seed": args.shuffle.then_some(args.seed),
        "slice": args.slice.map(|s| s.to_string()),
        "redo_existing": args.redo_existing,
        "max_steps": settings.max_steps,
        "max_tokens": settings.max_tokens,
        "timeout_seconds": settings.deadline.as_secs(),
        "price_per_million_tokens": price,
        "cost_limit": settings.limits.cost_limit,
        "total_cost_limit": settings.total_cost_limit,
        "max_format_errors": settings.limits.max_format_errors,
        "workers": args.workers.max(1),
        "model_concurrency": concurrency,
        "environment": settings.env.to_json(),
    })
}

/// The summaries an earlier run.json at `path` holds for instances this
/// invocation does not run (none when there is no such file).
pub(super) fn earlier_instances(path: &Path, todo: &[Instance]) -> Vec<Value> {
    let Some(old) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return Vec::new();
    };
    let again: std::collections::HashSet<&str> =
        todo.iter().map(|i| i.instance_id.as_str()).collect();
    old["instances"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|s| {
                    s["instance_id"]
                        .as_str()
                        .is_some_and(|id| !again.contains(id))
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// run.json: the settings, what this invocation did (`ran`, `skipped`,
/// `not_started`, `drained`), and over every instance of the run
/// directory (`earlier` ones kept, this invocation's replacing theirs)
/// `tokens`, `cost`, `by_status` and `instances`, sorted by id.
pub(super) fn run_json(
    settings: &Settings,
    results: &[InstanceResult],
    earlier: &[Value],
    skipped: &[String],
    not_started: &[String],
    drained: Option<&str>,
) -> Value {
    let mut instances: Vec<Value> = earlier.to_vec();
    instances.extend(results.iter().map(|r| r.summary(&settings.name)));
    instances.sort_by(|a, b| {
        let id = |v: &Value| v["instance_id"].as_str().unwrap_or_default().to_string();
        id(a).cmp(&id(b))
    });
    // In the fixed order of the statuses, each with its ids.
    let by_status: serde_json::Map<String, Value> = ExitStatus::ALL
        .iter()
        .map(|s| {
            let ids: Vec<&str> = instances
                .iter()
                .filter(|v| v["status"].as_str() == Some(s.as_str()))
                .filter_map(|v| v["instance_id"].as_str())
                .collect();
            (s.as_str().to_string(), json!(ids))
        })
        .collect();
    let cost = settings.limits.price.map(|_| {
        instances
            .iter()
            .filter_map(|v| v["cost"].as_f64())
            .sum::<f64>()
    });
    let tokens: u64 = instances.iter().filter_map(|v| v["tokens"].as_u64()).sum();
    let mut out = settings.run_config.clone();
    let extra = json!({
        "ran": results.len(),
        "skipped": skipped,
        "not_started": not_started,
        "drained": drained,
        "tokens": tokens,
        "cost": cost.map(|c| (c * 1e6).round() / 1e6),
        "by_status": by_status,
        "instances": instances,
    });
    if let (Value::Object(out), Value::Object(extra)) = (&mut out, extra) {
        out.extend(extra);
    }
    out
}

pub(super) fn table(results: &[InstanceResult], skipped: usize, not_started: usize) -> String {
    let width = results
        .iter()
        .map(|r| r.id.len())
        .max()
        .unwrap_or(0)
        .max("instance".len());
    let mut out = String::new();
    let priced = results.iter().any(|r| r.stats.cost.is_some());
    let _ = write!(
        out,
        "{:<width$}  {:<16}  {:>5}  {:>9}  {:>8}  {:>11}  {:>7}",
        "instance", "status", "steps", "tokens", "seconds", "patch lines", "refused"
    );
    if priced {
        let _ = write!(out, "  {:>9}", "cost");
    }
    out.push('\n');
    for r in results {
        let _ = write!(
            out,
            "{:<width$}  {:<16}  {:>5}  {:>9}  {:>8.1}  {:>11}  {:>7}",
            r.id,
            r.status.as_str(),
            r.steps,
            r.tokens,
            r.seconds,
            r.patch_lines(),
            r.refused_calls
        );
        if let (true, Some(c)) = (priced, r.stats.cost) {
            let _ = write!(out, "  {:>9}", money(c, r.stats.estimated));
        }
        out.push('\n');
    }
    let mut counts: BTreeMap<ExitStatus, usize> = BTreeMap::new();
    for r in results {
        *counts.entry(r.status).or_default() += 1;
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    let _ = write!(out, "{} instance(s) run", results.len());
    if !parts.is_empty() {
        let _ = write!(out, ": {}", parts.join(", "));
    }
    if priced {
        let total: f64 = results.iter().filter_map(|r| r.stats.cost).sum();
        let estimated = results.iter().any(|r| r.stats.estimated);
        let _ = write!(out, "; cost {}", money(total, estimated));
    }
    let refused: usize = results.iter().map(|r| r.refused_calls).sum();
    if refused > 0 {
        let _ = write!(out, "; {refused} refused calls");
    }
    if skipped > 0 {
        let _ = write!(out, "; {skipped} skipped (already in preds.jsonl)");
    }
    if not_started > 0 {
        let _ = write!(out, "; {not_started} not started");
    }
    out.push('\n');
    out
}
