//! One instance's result ([`InstanceResult`]): whether it goes into
//! preds.jsonl, and its `summary.json`.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::{Value, json};

use super::plan::Settings;
use super::status::ExitStatus;
use super::trajectory::ModelStats;

/// One instance's result: what summary.json and the table show.
pub(super) struct InstanceResult {
    pub(super) id: String,
    pub(super) status: ExitStatus,
    pub(super) steps: u64,
    pub(super) tokens: u64,
    pub(super) seconds: f64,
    pub(super) patch: String,
    pub(super) refused_calls: usize,
    /// The model's last answer, or what went wrong.
    pub(super) message: String,
    /// A session ran (so the patch, even empty, is the model's result).
    pub(super) session_ran: bool,
    pub(super) worktree: Option<PathBuf>,
    pub(super) stats: ModelStats,
}

impl InstanceResult {
    pub(super) fn failed(
        id: &str,
        status: ExitStatus,
        message: String,
        started: Instant,
    ) -> InstanceResult {
        InstanceResult {
            id: id.to_string(),
            status,
            steps: 0,
            tokens: 0,
            seconds: started.elapsed().as_secs_f64(),
            patch: String::new(),
            refused_calls: 0,
            message,
            session_ran: false,
            worktree: None,
            stats: ModelStats::default(),
        }
    }

    /// Whether it goes into preds.jsonl: any session's patch does, except
    /// an empty one after an infrastructure failure (retried next run).
    pub(super) fn recorded(&self) -> bool {
        let retry = self.status.retried_when_empty() && self.patch.is_empty();
        self.session_ran && !retry
    }

    pub(super) fn patch_lines(&self) -> usize {
        self.patch.lines().count()
    }

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

pub(super) fn write_summary(settings: &Settings, result: &InstanceResult) {
    let path = settings.out.join(&result.id).join("summary.json");
    let text = serde_json::to_string_pretty(&result.summary(&settings.name)).unwrap_or_default();
    if let Err(e) = std::fs::write(&path, text + "\n") {
        eprintln!("nib swebench: cannot write {}: {e}", path.display());
    }
}
