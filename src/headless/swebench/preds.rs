//! Predictions in the forms the SWE-bench harness and sb-cli read:
//! `preds.jsonl` (one `{instance_id, model_name_or_path, model_patch}` per
//! line, appended and flushed as each instance finishes, so a crash loses
//! nothing finished) and `preds.json` (a dict keyed by instance id, written
//! whole at the end, atomically). `nib swebench merge` is here too.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};

use clap::Args;
use serde_json::{Value, json};

use crate::settings::UsageError;

/// One prediction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    pub instance_id: String,
    pub model_name_or_path: String,
    pub model_patch: String,
}

impl Prediction {
    pub fn to_json(&self) -> Value {
        json!({
            "instance_id": self.instance_id,
            "model_name_or_path": self.model_name_or_path,
            "model_patch": self.model_patch,
        })
    }

    fn from_json(v: &Value) -> Option<Prediction> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Prediction {
            instance_id: s("instance_id")?,
            model_name_or_path: s("model_name_or_path").unwrap_or_default(),
            // null: the harness's "no patch"; kept as empty here.
            model_patch: s("model_patch").unwrap_or_default(),
        })
    }
}

/// The predictions in a `.jsonl` file, in file order. A line that does not
/// parse (a run killed mid-write leaves at most one, at the end) is skipped
/// with a warning on stderr.
pub fn read_jsonl(path: &Path) -> Result<Vec<Prediction>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line)
            .ok()
            .as_ref()
            .and_then(Prediction::from_json)
        {
            Some(p) => out.push(p),
            None => eprintln!(
                "nib swebench: {} line {}: not a prediction, skipped",
                path.display(),
                i + 1
            ),
        }
    }
    Ok(out)
}

/// Predictions from a `.jsonl` file, or a `.json` dict or list.
pub fn read_any(path: &Path) -> Result<Vec<Prediction>, String> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        return read_jsonl(path);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", path.display()))?;
    let items: Vec<Value> = match value {
        Value::Array(items) => items,
        Value::Object(map) => map.into_iter().map(|(_, v)| v).collect(),
        _ => {
            return Err(format!(
                "{}: not a list or dict of predictions",
                path.display()
            ));
        }
    };
    items
        .iter()
        .map(|v| {
            Prediction::from_json(v)
                .ok_or_else(|| format!("{}: a prediction without instance_id", path.display()))
        })
        .collect()
}

/// `preds.json`: a dict by instance id (a later prediction of the same id
/// wins), sorted by id, written to a temporary file and renamed.
pub fn write_dict(path: &Path, preds: &[Prediction]) -> Result<(), String> {
    let by_id: BTreeMap<&str, Value> = preds
        .iter()
        .map(|p| (p.instance_id.as_str(), p.to_json()))
        .collect();
    let text = serde_json::to_string_pretty(&by_id)
        .map_err(|e| format!("cannot encode the predictions: {e}"))?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `preds.jsonl` open for appending, shared by the workers.
pub struct Appender {
    path: PathBuf,
    file: Mutex<File>,
}

impl Appender {
    pub fn open(path: &Path) -> Result<Appender, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Ok(Appender {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Appends one line, whole, and flushes it to disk.
    pub fn append(&self, pred: &Prediction) -> Result<(), String> {
        let mut line = pred.to_json().to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_data())
            .map_err(|e| format!("cannot append to {}: {e}", self.path.display()))
    }
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Run directories (their preds.jsonl) or prediction files (.jsonl, .json).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where the merged dict goes.
    #[arg(long, short = 'o')]
    pub output: PathBuf,
}

/// `nib swebench merge`: the shards' predictions as one `preds.json`.
pub fn merge(args: MergeArgs) -> Result<ExitCode, UsageError> {
    let mut all = Vec::new();
    for input in &args.inputs {
        let file = if input.is_dir() {
            input.join("preds.jsonl")
        } else {
            input.clone()
        };
        if !file.is_file() {
            return Err(UsageError(format!(
                "{}: no predictions there (a run directory holds preds.jsonl)",
                file.display()
            )));
        }
        all.extend(read_any(&file).map_err(UsageError)?);
    }
    let count = all
        .iter()
        .map(|p| p.instance_id.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len();
    write_dict(&args.output, &all).map_err(UsageError)?;
    eprintln!(
        "nib swebench merge: {count} predictions from {} input(s) in {}",
        args.inputs.len(),
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}
