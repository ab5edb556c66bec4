//! `nib swebench`: headless sessions over SWE-bench instances, one patch
//! each, in the predictions format the official harness and sb-cli read;
//! `nib swebench grade` for a quick local check of those patches, and
//! `nib swebench merge` to join the predictions of several shards.
//!
//! - `instances.rs`: reading the records, `--shard`, `--instance`,
//!   `--filter`, `--shuffle`, `--slice`;
//! - `config.rs`: `--config FILE`, `OUT/run.config`, the price table;
//! - `worktree.rs`: the clone, a worktree at `base_commit`, the patch;
//! - `env.rs`: where commands run (`--env`: local, or a docker/podman
//!   container of the instance's image), `--install-cmd`;
//! - `run.rs`: the run, the worker pool, draining (Ctrl-C, the total cost
//!   limit); `instance.rs`: one instance's session and files;
//! - `status.rs`: the exit statuses; `watch.rs`: what follows a session
//!   as it runs (limits, trajectory, progress);
//! - `progress.rs`: the board on stderr; `drain.rs`: SIGINT;
//! - `trajectory.rs`: `<id>/trajectory.json` and `<id>/log.txt`;
//!   `show.rs`: `nib swebench show`;
//! - `report.rs`: summary.json, run.json, the table;
//! - `preds.rs`: preds.jsonl / preds.json, resume, `merge`;
//! - `grade.rs`: FAIL_TO_PASS / PASS_TO_PASS locally (not the harness);
//! - `logparse.rs`: test logs read as the harness's per-repository parsers do;
//! - `slurm.rs`: `nib swebench slurm`, a job array of shards and a merge;
//! - `plan.rs`: the run's settings resolved once, the task text;
//!   `result.rs`: an instance's result and summary.json.
//!
//! Usage, outputs and the batch-system recipes are in docs/swebench.md.

mod config;
mod drain;
mod env;
mod grade;
mod image;
mod instance;
mod instances;
mod logparse;
mod plan;
mod preds;
mod progress;
mod report;
mod result;
mod run;
mod show;
mod slurm;
mod status;
mod trajectory;
mod watch;
mod worktree;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::settings::UsageError;

pub use config::{Price, PriceArg};
pub use env::{EnvArgs, EnvKind, harness_image_id, remove_live_containers};
pub use grade::{GradeArgs, LogFormat};
pub use instances::{Instance, Narrow, Shard, Slice, load as load_instances, select};
pub use plan::render_task;
pub use preds::{MergeArgs, Prediction};
pub use progress::{Running, State as ProgressState, render as render_progress};
pub use show::ShowArgs;
pub use slurm::SlurmArgs;
pub use status::ExitStatus;

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
    /// Print an instance's trajectory: its steps, tool calls and results,
    /// the exit status and the model stats.
    Show(ShowArgs),
    /// Run over a Slurm cluster: a job array of shards into OUT/shards/I,
    /// then a job merging their predictions into OUT/preds.json.
    Slurm(SlurmArgs),
}

/// `nib swebench --instances F --repos DIR --out DIR [...]`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The instance records: JSONL, or a JSON array (required, here or
    /// in --config).
    #[arg(long)]
    pub instances: Option<PathBuf>,
    /// A directory of clones, named owner__repo or owner/repo (required).
    #[arg(long)]
    pub repos: Option<PathBuf>,
    /// Where predictions, per-instance files and run.json go (required).
    #[arg(long)]
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
    /// Run only the instances whose id matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,
    /// Shuffle the instances (after --filter, before --slice), by --seed.
    #[arg(long)]
    pub shuffle: bool,
    /// The seed of --shuffle: the same seed, the same order.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Take instances A..B (counted from 0, B left out) of those selected.
    #[arg(long, value_name = "A:B")]
    pub slice: Option<Slice>,
    /// Run instances already in preds.jsonl again (the new prediction wins).
    #[arg(long)]
    pub redo_existing: bool,
    /// key=value lines of run options (long flag names); flags given on
    /// the command line win. OUT/run.config is one.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Model replies per instance.
    #[arg(long, default_value_t = 100)]
    pub max_steps: u64,
    /// Tokens per instance (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub max_tokens: u64,
    /// Seconds per instance before its session is stopped.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// A model's price, USD per million tokens: MODEL=IN,OUT[,CACHED]
    /// (repeatable; `*` for any model).
    #[arg(long = "price", value_name = "MODEL=IN,OUT")]
    pub prices: Vec<PriceArg>,
    /// USD per instance before it is stopped with cost_limit (0: none).
    #[arg(long, default_value_t = 0.0)]
    pub cost_limit: f64,
    /// USD for the whole run: past it no new instance starts (0: none).
    #[arg(long, default_value_t = 0.0)]
    pub total_cost_limit: f64,
    /// Steps in a row with malformed tool calls before the instance is
    /// stopped with format_error (0: no limit).
    #[arg(long, default_value_t = 3)]
    pub max_format_errors: u64,
    /// Seconds between summary lines when stderr is not a terminal.
    #[arg(long, default_value_t = 60)]
    pub progress_every: u64,
    /// The strategy (default: the plain loop with compact as a hook, which
    /// keeps the context under a budget; no test runs the task did not
    /// ask for: `--strategy check --set check=CMD` adds one after done).
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
        Some(SwebenchCommand::Show(a)) => show::run(a),
        Some(SwebenchCommand::Slurm(a)) => slurm::run(a),
        None => run::run(args.run),
    }
}
