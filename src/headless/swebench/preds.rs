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
    /// Opens `path` for appending, after [`repair_tail`]: a prediction is
    /// never glued onto a line a crash cut.
    pub fn open(path: &Path) -> Result<Appender, String> {
        if let Some(repair) = repair_tail(path)? {
            eprintln!("nib swebench: {}: {repair}", path.display());
        }
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

/// What [`repair_tail`] did to a file's last line.
#[derive(Debug, PartialEq, Eq)]
pub enum TailRepair {
    /// A whole prediction lacked its newline; one was added.
    NewlineAdded,
    /// A cut line (not JSON) was removed: this many bytes, and the
    /// instance it was for when its id could still be read.
    Dropped {
        bytes: u64,
        instance: Option<String>,
    },
}

impl std::fmt::Display for TailRepair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TailRepair::NewlineAdded => {
                write!(f, "the last prediction had no newline; added one")
            }
            TailRepair::Dropped { bytes, instance } => {
                write!(
                    f,
                    "the last line was cut (a crash mid-write): dropped its {bytes} bytes, every whole line kept"
                )?;
                match instance {
                    Some(id) => write!(f, "; {id} is not in the predictions and runs again"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Makes `path` end in a whole line before anything is appended: a last
/// line without its newline is kept (newline added) when it is a whole
/// JSON object, and truncated away when it is not (a crash mid-write);
/// so is a last line that ends in a newline but is not JSON. Every other
/// line is kept as it is. `None` when nothing needed doing.
pub fn repair_tail(path: &Path) -> Result<Option<TailRepair>, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let start = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let last = &body[start..];
    let has_newline = body.len() < bytes.len();
    let whole = last.iter().all(u8::is_ascii_whitespace)
        || serde_json::from_slice::<Value>(last).is_ok_and(|v| v.is_object());
    let cannot = |e: std::io::Error| format!("cannot repair {}: {e}", path.display());
    if whole {
        if has_newline || last.is_empty() {
            return Ok(None);
        }
        let mut file = OpenOptions::new().append(true).open(path).map_err(cannot)?;
        file.write_all(b"\n")
            .and_then(|()| file.sync_data())
            .map_err(cannot)?;
        return Ok(Some(TailRepair::NewlineAdded));
    }
    let file = OpenOptions::new().write(true).open(path).map_err(cannot)?;
    file.set_len(start as u64)
        .and_then(|()| file.sync_data())
        .map_err(cannot)?;
    Ok(Some(TailRepair::Dropped {
        bytes: (bytes.len() - start) as u64,
        instance: cut_instance_id(&String::from_utf8_lossy(last)),
    }))
}

/// The `instance_id` of a cut prediction line, when it is still whole
/// (nib writes it first).
fn cut_instance_id(fragment: &str) -> Option<String> {
    let rest = fragment.split_once("\"instance_id\"")?.1;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let value = rest.strip_prefix('"')?;
    let end = value.find('"')?;
    let id = &value[..end];
    (!id.is_empty() && !id.contains('\\')).then(|| id.to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pred(id: &str) -> Prediction {
        Prediction {
            instance_id: id.into(),
            model_name_or_path: "m".into(),
            model_patch: "diff --git a/x b/x\n".into(),
        }
    }

    #[test]
    fn a_cut_last_line_is_dropped_and_whole_lines_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preds.jsonl");
        let a = format!("{}\n", pred("a").to_json());
        let b = pred("b").to_json().to_string();
        let cut = &b[..b.len() / 2];
        std::fs::write(&path, format!("{a}{cut}")).unwrap();
        let repair = repair_tail(&path).unwrap();
        assert_eq!(
            repair,
            Some(TailRepair::Dropped {
                bytes: cut.len() as u64,
                instance: Some("b".into())
            })
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), a);
        // Appending now starts a line of its own.
        Appender::open(&path).unwrap().append(&pred("c")).unwrap();
        let ids: Vec<String> = read_jsonl(&path)
            .unwrap()
            .into_iter()
            .map(|p| p.instance_id)
            .collect();
        assert_eq!(ids, ["a", "c"]);
    }

    #[test]
    fn a_whole_last_line_without_newline_is_kept_and_bad_lines_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preds.jsonl");
        let a = pred("a").to_json().to_string();
        std::fs::write(&path, &a).unwrap();
        assert_eq!(repair_tail(&path).unwrap(), Some(TailRepair::NewlineAdded));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{a}\n"));
        assert_eq!(repair_tail(&path).unwrap(), None);
        // A last line with its newline that is not JSON goes too.
        let torn = "{\"instance_id\": \"b\", \"mod\n";
        std::fs::write(&path, format!("{a}\n{torn}")).unwrap();
        let repair = repair_tail(&path).unwrap();
        let bytes = torn.len() as u64;
        assert_eq!(
            repair,
            Some(TailRepair::Dropped {
                bytes,
                instance: Some("b".into())
            })
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{a}\n"));
        // Empty and missing files need nothing.
        std::fs::write(&path, "").unwrap();
        assert_eq!(repair_tail(&path).unwrap(), None);
        assert_eq!(repair_tail(&dir.path().join("none.jsonl")).unwrap(), None);
    }
}
