//! What a run reports: an instance's `summary.json`, the run's `run.json`
//! and the table on stdout.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::RunArgs;
use super::instances::Shard;
use super::run::{ExitStatus, InstanceResult, Settings};
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
            "in_preds": self.recorded(),
            "model_name_or_path": name,
            "message": self.message,
            "worktree": self.worktree.as_ref().map(|p| p.display().to_string()),
        })
    }
}

pub(super) fn run_json(
    settings: &Settings,
    args: &RunArgs,
    instances_file: &Path,
    results: &[InstanceResult],
    skipped: &[String],
    concurrency: usize,
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
    let (provider, model) = match &settings.model {
        ModelChoice::Remote(cfg) => (cfg.provider.as_str().to_string(), cfg.model.clone()),
        ModelChoice::Scripted { spec, .. } => ("scripted".to_string(), spec.clone()),
    };
    json!({
        "nib_version": env!("CARGO_PKG_VERSION"),
        "model_name_or_path": settings.name,
        "provider": provider,
        "model": model,
        "strategy": settings.strategy.as_ref().map_or("default".into(), |p| p.display().to_string()),
        "prompt": args.prompt.as_ref().map_or("default".into(), |p| p.display().to_string()),
        "instances_file": instances_file.display().to_string(),
        "shard": args.shard.map(|s: Shard| s.to_string()),
        "only": args.only,
        "max_steps": settings.max_steps,
        "max_tokens": settings.max_tokens,
        "timeout_seconds": settings.deadline.as_secs(),
        "workers": args.workers.max(1),
        "model_concurrency": concurrency,
        "environment": settings.env.to_json(),
        "ran": results.len(),
        "skipped": skipped,
        "by_status": by_status,
        "instances": results.iter().map(|r| r.summary(&settings.name)).collect::<Vec<_>>(),
    })
}

pub(super) fn table(results: &[InstanceResult], skipped: usize) -> String {
    let width = results
        .iter()
        .map(|r| r.id.len())
        .max()
        .unwrap_or(0)
        .max("instance".len());
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  {:<11}  {:>5}  {:>9}  {:>8}  {:>11}",
        "instance", "status", "steps", "tokens", "seconds", "patch lines"
    );
    for r in results {
        let _ = writeln!(
            out,
            "{:<width$}  {:<11}  {:>5}  {:>9}  {:>8.1}  {:>11}",
            r.id,
            r.status.as_str(),
            r.steps,
            r.tokens,
            r.seconds,
            r.patch_lines()
        );
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
    if skipped > 0 {
        let _ = write!(out, "; {skipped} skipped (already in preds.jsonl)");
    }
    out.push('\n');
    out
}
