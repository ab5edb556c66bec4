//! `nib sessions`: the sessions of a workspace, oldest first, with when
//! each started, its first task, how it ended, its steps, tokens and cost,
//! and the id `--resume` takes (any unique start of it will do).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::model::show_tokens;
use crate::session::resume::{SessionSummary, list};
use crate::settings::prices::{cost_of, show_cost};
use crate::settings::{UsageError, UserConfig, workspace};

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// The workspace root (default: the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// One JSON object per session, one per line.
    #[arg(long)]
    pub json: bool,
}

/// A session's cost: `None` when any of its models has no price.
fn cost(s: &SessionSummary, prices: &std::collections::BTreeMap<String, Vec<f64>>) -> Option<f64> {
    s.usage
        .iter()
        .map(|(model, u)| cost_of(prices, model, u))
        .sum::<Option<f64>>()
}

pub fn run(args: SessionsArgs) -> Result<ExitCode, UsageError> {
    let config = UserConfig::load()?;
    let ws = workspace(args.root)?;
    let dir = ws.root().join(".nib").join("sessions");
    let all = list(&dir);
    if all.is_empty() && !args.json {
        eprintln!(
            "no sessions in {} yet: `nib` or `nib exec TASK` starts one",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for s in &all {
        let total = s.total();
        let cost = cost(s, &config.prices);
        if args.json {
            let line = serde_json::json!({
                "id": s.id,
                "started": s.started,
                "task": s.task,
                "tasks": s.tasks,
                "status": s.status,
                "steps": s.steps,
                "usage": total,
                "cost_usd": cost,
                "path": s.path.display().to_string(),
            });
            println!("{line}");
            continue;
        }
        let task: String = s
            .task
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(50)
            .collect();
        let more = match s.tasks {
            0 | 1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        println!(
            "{}  {}  {:<11} {:>4} steps {:>7} tokens {:>9}  {task}{more}",
            s.id,
            s.started.get(..16).unwrap_or(&s.started).replace('T', " "),
            s.status,
            s.steps,
            show_tokens(total.prompt + total.completion, total.estimated),
            cost.map_or("-".into(), show_cost),
        );
    }
    if !args.json {
        eprintln!(
            "`nib --resume ID` or `nib exec --resume=ID TASK` continues one (the start of an id will do)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
