//! `nib swebench`: headless sessions over SWE-bench instances, one patch
//! each, in the predictions format the official harness and sb-cli read;
//! `nib swebench grade` for a quick local check of those patches, and
//! `nib swebench merge` to join the predictions of several shards.
//!
//! - `instances.rs`: reading the records, `--shard`, `--instance`;
//! - `worktree.rs`: the clone, a worktree at `base_commit`, the patch;
//! - `env.rs`: where commands run (`--env`: local, or a docker/podman
//!   container of the instance's image), `--install-cmd`;
//! - `run.rs`: one session per instance, the worker pool, exit statuses,
//!   the per-instance files, run.json and the summary table;
//! - `report.rs`: summary.json, run.json, the table;
//! - `preds.rs`: preds.jsonl / preds.json, resume, `merge`;
//! - `grade.rs`: FAIL_TO_PASS / PASS_TO_PASS locally (not the harness);
//! - `logparse.rs`: test logs read as the harness's per-repository parsers do.
//!
//! Usage, outputs and the batch-system recipes are in docs/swebench.md.

mod env;
mod grade;
mod instances;
mod logparse;
mod preds;
mod report;
mod run;
mod worktree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::settings::UsageError;

pub use env::{EnvArgs, EnvKind, harness_image_id, remove_live_containers};
pub use grade::{GradeArgs, LogFormat};
pub use instances::{Instance, Shard, load as load_instances, select};
pub use preds::{MergeArgs, Prediction};
pub use run::{ExitStatus, render_task};

use crate::settings::ModelArgs;

/// The prompt a session gets, with `{problem_statement}`, `{repo}` and
/// `{instance_id}` filled in.
pub const DEFAULT_PROMPT: &str = include_str!("../../../prompts/swebench.md");

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SwebenchArgs {
    #[command(subcommand)]
    pub command: Option<SwebenchCommand>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum SwebenchCommand {
    /// Run each predicted instance's FAIL_TO_PASS and PASS_TO_PASS tests
    /// locally, with the patch applied: a quick check, not the official
    /// harness (Docker), which is the reference.
    Grade(GradeArgs),
    /// Merge the predictions of several runs (shards) into one preds.json.
    Merge(MergeArgs),
}

/// `nib swebench --instances F --repos DIR --out DIR [...]`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The instance records: JSONL, or a JSON array.
    #[arg(long, required = true)]
    pub instances: Option<PathBuf>,
    /// A directory of clones, named owner__repo or owner/repo.
    #[arg(long, required = true)]
    pub repos: Option<PathBuf>,
    /// Where predictions, per-instance files and run.json go.
    #[arg(long, required = true)]
    pub out: Option<PathBuf>,
    /// Where worktrees are made (default: OUT/.work).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Keep each worktree after its patch is taken.
    #[arg(long)]
    pub keep_worktrees: bool,
    #[command(flatten)]
    pub model_args: ModelArgs,
    /// Instances run at once.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Model requests in flight per endpoint, across workers (default:
    /// --workers).
    #[arg(long)]
    pub model_concurrency: Option<usize>,
    /// Take shard I of N (I counted from 0): every N-th instance by sorted id.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Run only this instance (repeatable).
    #[arg(long = "instance", value_name = "ID")]
    pub only: Vec<String>,
    /// Model replies per instance.
    #[arg(long, default_value_t = 100)]
    pub max_steps: u64,
    /// Tokens per instance (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub max_tokens: u64,
    /// Seconds per instance before its session is stopped.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// The strategy (default: check, with compact as a hook: the project's
    /// tests after each change, and the context kept under a budget;
    /// `--strategy default` runs the plain loop).
    #[command(flatten)]
    pub strategy_args: crate::settings::StrategyArgs,
    /// A prompt template instead of prompts/swebench.md ({problem_statement},
    /// {repo}, {instance_id}, {hints_text}).
    #[arg(long)]
    pub prompt: Option<PathBuf>,
    /// model_name_or_path in the predictions (default: nib-<model>).
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub env: env::EnvArgs,
}

pub fn run(args: SwebenchArgs) -> Result<ExitCode, UsageError> {
    match args.command {
        Some(SwebenchCommand::Grade(g)) => grade::run(g),
        Some(SwebenchCommand::Merge(m)) => preds::merge(m),
        None => run::run(args.run),
    }
}
