//! What a run reports: an instance's `summary.json`, the run's `run.json`
//! and the table on stdout.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::RunArgs;
use super::instance::InstanceResult;
use super::instances::Shard;
use super::progress::money;
use super::run::Settings;
use super::status::ExitStatus;
use crate::settings::ModelChoice;

impl InstanceResult {
    pub(super) fn summary(&self, name: &str) -> Value {
        json!({
            "instance_id": self.id,
            "status": self.status.as_str(),
            "steps": self.steps,
            "tokens": self.tokens,
            "seconds": (self.seconds * 10.0).round() / 10.0,
            "patch_lines": self.patch_lines(),
            "refused_calls": self.refused_calls,
            "cost": self.stats.cost.map(|c| (c * 1e6).round() / 1e6),
            "model_stats": self.stats.to_json(),
            "in_preds": self.recorded(),
            "model_name_or_path": name,
            "message": self.message,
            "worktree": self.worktree.as_ref().map(|p| p.display().to_string()),
        })
    }
}

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

pub(super) fn run_json(
    settings: &Settings,
    results: &[InstanceResult],
    skipped: &[String],
    not_started: &[String],
    drained: Option<&str>,
) -> Value {
    // In the fixed order of the statuses, each with its ids.
    let by_status: serde_json::Map<String, Value> = ExitStatus::ALL
        .iter()
        .map(|s| {
            let ids: Vec<&str> = results
                .iter()
                .filter(|r| r.status == *s)
                .map(|r| r.id.as_str())
                .collect();
            (s.as_str().to_string(), json!(ids))
        })
        .collect();
    let cost = settings
        .limits
        .price
        .map(|_| results.iter().filter_map(|r| r.stats.cost).sum::<f64>());
    let mut out = settings.run_config.clone();
    let extra = json!({
        "ran": results.len(),
        "skipped": skipped,
        "not_started": not_started,
        "drained": drained,
        "tokens": results.iter().map(|r| r.tokens).sum::<u64>(),
        "cost": cost.map(|c| (c * 1e6).round() / 1e6),
        "by_status": by_status,
        "instances": results.iter().map(|r| r.summary(&settings.name)).collect::<Vec<_>>(),
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
        "{:<width$}  {:<16}  {:>5}  {:>9}  {:>8}  {:>11}",
        "instance", "status", "steps", "tokens", "seconds", "patch lines"
    );
    if priced {
        let _ = write!(out, "  {:>9}", "cost");
    }
    out.push('\n');
    for r in results {
        let _ = write!(
            out,
            "{:<width$}  {:<16}  {:>5}  {:>9}  {:>8.1}  {:>11}",
            r.id,
            r.status.as_str(),
            r.steps,
            r.tokens,
            r.seconds,
            r.patch_lines()
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
    if skipped > 0 {
        let _ = write!(out, "; {skipped} skipped (already in preds.jsonl)");
    }
    if not_started > 0 {
        let _ = write!(out, "; {not_started} not started");
    }
    out.push('\n');
    out
}
