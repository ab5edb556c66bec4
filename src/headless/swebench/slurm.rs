//! `nib swebench slurm`: one run spread over a Slurm cluster. It writes
//! two batch scripts under `OUT/slurm/` and submits them with `sbatch`:
//!
//! - `shards.sbatch`, a job array of N tasks, task I running
//!   `nib swebench --config OUT/slurm/run.config --shard I/N --out
//!   OUT/shards/I` (a shard's own directory: shards never write one file);
//! - `merge.sbatch`, submitted to start after the whole array
//!   (`--dependency=afterany`), joining the shards' predictions into
//!   `OUT/preds.json` and saying which shard did not finish.
//!
//! The run's options are those `nib swebench` takes, given after `--`
//! and checked here before anything is submitted; they are saved as
//! `OUT/slurm/run.config` (the form `--config` reads). `--dry-run` writes
//! and prints the scripts and submits nothing. A failed or preempted
//! shard is resubmitted alone (`sbatch --array=I OUT/slurm/shards.sbatch`)
//! and resumes from its preds.jsonl.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::Args;

use super::config;
use super::instances;
use crate::settings::UsageError;

/// `nib swebench slurm --shards N [--dry-run] [--sbatch OPT]... -- RUN OPTIONS`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// How many shards: the array's tasks, task I running `--shard I/N`.
    #[arg(long)]
    pub shards: usize,
    /// Write the scripts under OUT/slurm and print them; submit nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// An `#SBATCH` line for both jobs (repeatable), e.g.
    /// `--sbatch=--partition=cpu --sbatch=--time=12:00:00`.
    #[arg(long = "sbatch", value_name = "OPTION", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
    /// The nib the tasks run (default: this executable, which must be at
    /// the same path on the compute nodes).
    #[arg(long, value_name = "PATH")]
    pub nib: Option<PathBuf>,
    /// The run's options, after `--`, as `nib swebench` takes them
    /// (`--instances`, `--repos`, `--out`, the model, the limits ...).
    #[arg(last = true, required = true, value_name = "RUN OPTIONS")]
    pub run: Vec<OsString>,
}

/// The scripts of one submission.
pub struct Scripts {
    pub shards: String,
    pub merge: String,
}

pub fn run(args: SlurmArgs) -> Result<ExitCode, UsageError> {
    if args.shards == 0 {
        return Err(UsageError("--shards must be 1 or more".into()));
    }
    let effective = config::parse_run(args.run.clone())?;
    let run = &effective.args;
    if run.shard.is_some() {
        return Err(UsageError(
            "nib swebench slurm gives each task its --shard: leave --shard out of the run's options".into(),
        ));
    }
    let (Some(instances_file), Some(out)) = (run.instances.clone(), run.out.clone()) else {
        return Err(UsageError(
            "the run's options (after --) need --instances FILE and --out DIR (or a --config holding them)".into(),
        ));
    };
    // A bad instances file is found now, not by N tasks in a queue.
    let count = instances::load(&instances_file).map_err(UsageError)?.len();
    if args.shards > count {
        eprintln!(
            "nib swebench slurm: {} shards for {count} instance(s): {} task(s) will have nothing to run",
            args.shards,
            args.shards - count
        );
    }
    std::fs::create_dir_all(out.join("slurm"))
        .map_err(|e| UsageError(format!("cannot create {}/slurm: {e}", out.display())))?;
    let out = std::fs::canonicalize(&out)
        .map_err(|e| UsageError(format!("--out {}: {e}", out.display())))?;
    let slurm = out.join("slurm");
    let config_text = effective
        .run_config()
        .ok_or_else(|| UsageError("the run's options could not be saved".into()))?;
    let config_path = slurm.join("run.config");
    write(&config_path, &config_text)?;
    let nib = match &args.nib {
        Some(p) => p.clone(),
        None => std::env::current_exe().map_err(|e| {
            UsageError(format!(
                "cannot find this nib's path ({e}); give --nib PATH"
            ))
        })?,
    };
    let cwd = std::env::current_dir()
        .map_err(|e| UsageError(format!("cannot read the current directory: {e}")))?;
    let scripts = scripts(&nib, &out, &cwd, args.shards, &args.sbatch);
    let shards_path = slurm.join("shards.sbatch");
    let merge_path = slurm.join("merge.sbatch");
    write(&shards_path, &scripts.shards)?;
    write(&merge_path, &scripts.merge)?;
    if args.dry_run {
        println!("# {}\n{}", shards_path.display(), scripts.shards);
        println!("# {}\n{}", merge_path.display(), scripts.merge);
        println!(
            "# to submit: jobid=$(sbatch --parsable {}) && sbatch --dependency=afterany:${{jobid%%;*}} {}",
            shards_path.display(),
            merge_path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let array_job = sbatch(&[shards_path.as_os_str().to_owned()])?;
    let merge_job = sbatch(&[
        OsString::from(format!("--dependency=afterany:{array_job}")),
        merge_path.as_os_str().to_owned(),
    ])?;
    let jobs =
        serde_json::json!({"shards_job": array_job, "merge_job": merge_job, "shards": args.shards});
    write(
        &slurm.join("jobs.json"),
        &(serde_json::to_string_pretty(&jobs).unwrap_or_default() + "\n"),
    )?;
    println!(
        "submitted job {array_job} ({} shard task(s)) and job {merge_job} (the merge, after them); logs in {}; predictions will be in {}",
        args.shards,
        slurm.display(),
        out.join("preds.json").display()
    );
    Ok(ExitCode::SUCCESS)
}

fn write(path: &Path, text: &str) -> Result<(), UsageError> {
    std::fs::write(path, text)
        .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))
}

/// Runs `sbatch --parsable ARGS`; the job id it prints.
fn sbatch(args: &[OsString]) -> Result<String, UsageError> {
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .output()
        .map_err(|e| {
            UsageError(format!(
                "cannot run sbatch ({e}): run this on a Slurm submit host, or use --dry-run to see the scripts"
            ))
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    // `--parsable` prints `id` or `id;cluster`.
    let id = text
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    if !out.status.success() || id.is_empty() {
        return Err(UsageError(format!(
            "sbatch failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(id)
}

/// `s` for `sh`, in single quotes.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The two job scripts: the shards' array and the merge.
pub fn scripts(nib: &Path, out: &Path, cwd: &Path, shards: usize, extra: &[String]) -> Scripts {
    let q = |p: &Path| quote(&p.display().to_string());
    let slurm = out.join("slurm");
    let header = |name: &str, output: &str| {
        let mut h = String::from("#!/bin/bash\n");
        let _ = writeln!(h, "#SBATCH --job-name={name}");
        let _ = writeln!(h, "#SBATCH --output={}", slurm.join(output).display());
        let _ = writeln!(h, "#SBATCH --chdir={}", cwd.display());
        for line in extra {
            let _ = writeln!(h, "#SBATCH {line}");
        }
        h
    };
    let mut array = header("nib-swebench", "shard-%a.log");
    // The array line goes before any command: sbatch stops reading
    // #SBATCH lines at the first one.
    array = array.replacen(
        "#SBATCH --output",
        &format!("#SBATCH --array=0-{}\n#SBATCH --output", shards - 1),
        1,
    );
    let _ = write!(
        array,
        "# nib swebench slurm: shard $SLURM_ARRAY_TASK_ID of {shards}, into its own directory.\n\
         # A shard that failed resumes when resubmitted alone: sbatch --array=I {}\n\
         set -u\n\
         exec {} swebench --config {} --shard \"$SLURM_ARRAY_TASK_ID/{shards}\" --out {}/\"$SLURM_ARRAY_TASK_ID\"\n",
        slurm.join("shards.sbatch").display(),
        q(nib),
        q(&slurm.join("run.config")),
        q(&out.join("shards")),
    );
    let mut merge = header("nib-swebench-merge", "merge.log");
    let shard_dirs: Vec<String> = (0..shards)
        .map(|i| q(&out.join("shards").join(i.to_string())))
        .collect();
    let _ = write!(
        merge,
        "# nib swebench slurm: the shards' predictions into one preds.json.\n\
         set -u\n\
         unfinished=0\n\
         present=()\n\
         for dir in {dirs}; do\n\
         \x20   if [ -s \"$dir/preds.jsonl\" ]; then present+=(\"$dir\"); fi\n\
         \x20   if [ ! -s \"$dir/run.json\" ]; then\n\
         \x20       echo \"nib swebench slurm: $dir did not finish: resubmit its shard (sbatch --array=${{dir##*/}} {shards_script}), then this merge (sbatch {merge_script})\"\n\
         \x20       unfinished=1\n\
         \x20   fi\n\
         done\n\
         if [ \"${{#present[@]}}\" -gt 0 ]; then\n\
         \x20   {nib} swebench merge \"${{present[@]}}\" -o {preds} || exit 1\n\
         else\n\
         \x20   echo \"nib swebench slurm: no shard wrote a prediction\"\n\
         fi\n\
         exit \"$unfinished\"\n",
        dirs = shard_dirs.join(" "),
        shards_script = slurm.join("shards.sbatch").display(),
        merge_script = slurm.join("merge.sbatch").display(),
        nib = q(nib),
        preds = q(&out.join("preds.json")),
    );
    Scripts {
        shards: array,
        merge,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_array_runs_one_shard_per_task_and_the_merge_names_every_shard() {
        let s = scripts(
            Path::new("/opt/nib"),
            Path::new("/r/out"),
            Path::new("/home/me"),
            4,
            &["--time=1:00:00".into()],
        );
        let lines: Vec<&str> = s.shards.lines().collect();
        assert_eq!(lines[0], "#!/bin/bash");
        assert!(
            lines[1..6].iter().all(|l| l.starts_with("#SBATCH ")),
            "{lines:?}"
        );
        assert!(s.shards.contains("#SBATCH --array=0-3\n"));
        assert!(s.shards.contains("#SBATCH --time=1:00:00\n"));
        assert!(s.shards.contains(
            "exec '/opt/nib' swebench --config '/r/out/slurm/run.config' --shard \"$SLURM_ARRAY_TASK_ID/4\" --out '/r/out/shards'/\"$SLURM_ARRAY_TASK_ID\""
        ));
        assert!(
            s.merge.contains(
                "'/r/out/shards/0' '/r/out/shards/1' '/r/out/shards/2' '/r/out/shards/3'"
            )
        );
        assert!(s.merge.contains("-o '/r/out/preds.json'"));
        assert!(!s.merge.contains("#SBATCH --array"));
        assert_eq!(quote("it's"), r"'it'\''s'");
    }
}
