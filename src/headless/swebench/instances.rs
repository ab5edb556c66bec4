//! SWE-bench instance records: reading them (JSONL, or one JSON array),
//! the test lists in either of their forms, and choosing which instances a
//! run takes (`--shard`, `--instance`, `--filter`, `--shuffle --seed`,
//! `--slice`).
//!
//! Only the fields nib uses are read; the others (`created_at`, `version`,
//! `environment_setup_commit`, a copy's own extras) are ignored.

use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde_json::Value;

/// One task of the benchmark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    /// `owner__repo-N`; also the name of the instance's output directory.
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// The commit the agent works on; the patch is a diff against it.
    pub base_commit: String,
    /// The issue text: the only part of the record the agent sees.
    pub problem_statement: String,
    pub hints_text: String,
    /// The gold fix (never shown to the agent; `grade --gold` applies it).
    pub patch: String,
    /// The tests that judge a fix (never shown to the agent).
    pub test_patch: String,
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
    /// nib's own optional field: the command `grade` runs for this
    /// instance, with `{tests}` where the test files go.
    pub test_cmd: Option<String>,
}

/// Reads the records in `path`: a JSON array of objects, or one object per
/// line (blank lines skipped). Ids must be unique and usable as directory
/// names.
pub fn load(path: &Path) -> Result<Vec<Instance>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the instances file {}: {e}", path.display()))?;
    let name = path.display();
    parse(&text).map_err(|e| format!("{name}: {e}"))
}

/// [`load`] on text already read.
pub fn parse(text: &str) -> Result<Vec<Instance>, String> {
    let records: Vec<(String, Value)> = if text.trim_start().starts_with('[') {
        let all: Vec<Value> = serde_json::from_str(text).map_err(|e| {
            format!("not a JSON array of instance records ({e}); give a JSON array or JSONL")
        })?;
        all.into_iter()
            .enumerate()
            .map(|(i, v)| (format!("record {}", i + 1), v))
            .collect()
    } else {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value = serde_json::from_str(line).map_err(|e| {
                format!(
                    "line {}: not a JSON object ({e}); JSONL needs one whole record per line",
                    i + 1
                )
            })?;
            out.push((format!("line {}", i + 1), value));
        }
        out
    };
    let mut seen = HashSet::new();
    let mut instances = Vec::with_capacity(records.len());
    for (place, value) in records {
        let instance = from_value(&value).map_err(|e| format!("{place}: {e}"))?;
        if !seen.insert(instance.instance_id.clone()) {
            return Err(format!(
                "{place}: instance {} appears twice; keep one record per instance",
                instance.instance_id
            ));
        }
        instances.push(instance);
    }
    if instances.is_empty() {
        return Err("no instance records in the file".into());
    }
    Ok(instances)
}

fn from_value(value: &Value) -> Result<Instance, String> {
    let Some(obj) = value.as_object() else {
        return Err("a record must be a JSON object".into());
    };
    let text = |key: &str, required: bool| -> Result<String, String> {
        match obj.get(key) {
            Some(Value::String(s)) if !(required && s.trim().is_empty()) => Ok(s.clone()),
            None | Some(Value::Null) if !required => Ok(String::new()),
            None | Some(Value::Null) => Err(format!("the record has no {key}")),
            Some(Value::String(_)) => Err(format!("{key} is empty")),
            Some(other) => Err(format!("{key} must be a string, not {other}")),
        }
    };
    let instance_id = text("instance_id", true)?;
    let within = |e: String| format!("instance {instance_id}: {e}");
    check_id(&instance_id).map_err(within)?;
    let repo = text("repo", true).map_err(within)?;
    if repo.split('/').count() != 2 || repo.split('/').any(|p| p.is_empty() || p == "..") {
        return Err(within(format!("repo {repo:?} is not owner/name")));
    }
    Ok(Instance {
        repo,
        base_commit: text("base_commit", true).map_err(within)?,
        problem_statement: text("problem_statement", false).map_err(within)?,
        hints_text: text("hints_text", false).map_err(within)?,
        patch: text("patch", false).map_err(within)?,
        test_patch: text("test_patch", false).map_err(within)?,
        fail_to_pass: tests(obj.get("FAIL_TO_PASS"), "FAIL_TO_PASS").map_err(within)?,
        pass_to_pass: tests(obj.get("PASS_TO_PASS"), "PASS_TO_PASS").map_err(within)?,
        test_cmd: Some(text("test_cmd", false).map_err(within)?).filter(|c| !c.is_empty()),
        instance_id,
    })
}

/// A test list as the dataset stores it (a JSON-encoded string holding a
/// list) or as some copies do (a real list).
fn tests(value: Option<&Value>, key: &str) -> Result<Vec<String>, String> {
    let bad = || {
        format!(
            "{key} must be a list of test ids, or a string holding one in JSON (as the dataset stores it)"
        )
    };
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Vec::new()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).map_err(|_| bad())?,
        Some(v) => v.clone(),
    };
    let Value::Array(items) = list else {
        return Err(bad());
    };
    items
        .into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            _ => Err(bad()),
        })
        .collect()
}

/// Ids name directories under --out: no separators, no leading dot.
fn check_id(id: &str) -> Result<(), String> {
    let ok = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        && !id.starts_with('.');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the id {id:?} cannot name a directory; ids use letters, digits, '_', '-' and '.'"
        ))
    }
}

/// `--shard I/N`: the I-th of N shards, counted from 0, so that
/// `JOB_COMPLETION_INDEX` and `SLURM_ARRAY_TASK_ID` (with `--array=0-(N-1)`)
/// can be passed as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let usage = || {
            format!(
                "--shard {s:?}: give I/N, I counted from 0 (the four shards of a run are 0/4, 1/4, 2/4, 3/4)"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(usage)?;
        let index: usize = i.trim().parse().map_err(|_| usage())?;
        let count: usize = n.trim().parse().map_err(|_| usage())?;
        if count == 0 || index >= count {
            return Err(usage());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The instances a run takes, in the file's order: the shard's share of the whole
/// file (every N-th by sorted id, so a shard's set does not depend on
/// other flags), then those `--instance` names, if any. An id given that
/// the file lacks is an error; one in another shard is simply not taken.
pub fn select(
    all: Vec<Instance>,
    shard: Option<Shard>,
    only: &[String],
) -> Result<Vec<Instance>, String> {
    // A shard is every N-th id in sorted order (so it depends on the file's
    // ids only); what is kept stays in the file's order, which --slice counts in.
    let mut sorted: Vec<&str> = all.iter().map(|i| i.instance_id.as_str()).collect();
    sorted.sort_unstable();
    let in_shard: std::collections::HashSet<String> = sorted
        .iter()
        .enumerate()
        .filter(|(k, _)| shard.is_none_or(|s| k % s.count == s.index))
        .map(|(_, id)| id.to_string())
        .collect();
    if let Some(missing) = only
        .iter()
        .find(|id| !all.iter().any(|i| &i.instance_id == *id))
    {
        return Err(format!(
            "--instance {missing}: no such instance in the instances file"
        ));
    }
    Ok(all
        .into_iter()
        .filter(|i| in_shard.contains(&i.instance_id))
        .filter(|i| only.is_empty() || only.contains(&i.instance_id))
        .collect())
}

/// `--slice A:B`: instances A (counted from 0) up to, not including, B;
/// either end may be left out (`:5`, `10:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub start: usize,
    pub end: Option<usize>,
}

impl FromStr for Slice {
    type Err = String;

    fn from_str(s: &str) -> Result<Slice, String> {
        let usage = || {
            format!(
                "--slice {s:?}: give A:B, counted from 0 (0:10 is the first ten; :5 and 10: leave an end open)"
            )
        };
        let (a, b) = s.split_once(':').ok_or_else(usage)?;
        let num = |t: &str| -> Result<Option<usize>, String> {
            match t.trim() {
                "" => Ok(None),
                t => t.parse().map(Some).map_err(|_| usage()),
            }
        };
        let slice = Slice {
            start: num(a)?.unwrap_or(0),
            end: num(b)?,
        };
        if slice.end.is_some_and(|e| e < slice.start) {
            return Err(usage());
        }
        Ok(slice)
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.end {
            Some(e) => write!(f, "{}:{e}", self.start),
            None => write!(f, "{}:", self.start),
        }
    }
}

/// What narrows the selected instances further, applied in this order:
/// the regex on `instance_id`, the shuffle (the same seed gives the same
/// order on any machine), the slice.
#[derive(Debug, Clone, Default)]
pub struct Narrow {
    pub filter: Option<regex::Regex>,
    pub shuffle: Option<u64>,
    pub slice: Option<Slice>,
}

impl Narrow {
    pub fn apply(&self, mut list: Vec<Instance>) -> Vec<Instance> {
        if let Some(re) = &self.filter {
            list.retain(|i| re.is_match(&i.instance_id));
        }
        if let Some(seed) = self.shuffle {
            // From sorted ids, so a seed gives one order whatever the file's.
            list.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
            shuffle(&mut list, seed);
        }
        if let Some(s) = self.slice {
            let end = s.end.unwrap_or(list.len()).min(list.len());
            let start = s.start.min(end);
            list = list.drain(start..end).collect();
        }
        list
    }
}

/// Fisher-Yates with splitmix64: fixed by the seed, no platform in it.
fn shuffle<T>(list: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..list.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        list.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str) -> Value {
        serde_json::json!({"instance_id": id, "repo": "o/r", "base_commit": "abc",
            "FAIL_TO_PASS": "[\"t::a\"]", "PASS_TO_PASS": ["t::b"]})
    }

    #[test]
    fn both_list_forms_and_both_file_forms() {
        let line = record("o__r-1").to_string();
        let a = parse(&format!("{line}\n\n")).expect("jsonl");
        let b = parse(&format!("[{line}]")).expect("array");
        assert_eq!(a, b);
        assert_eq!(a[0].fail_to_pass, vec!["t::a"]);
        assert_eq!(a[0].pass_to_pass, vec!["t::b"]);
    }

    #[test]
    fn bad_records_say_where_and_what() {
        let e = parse("{\"instance_id\": \"x\"}").unwrap_err();
        assert!(e.contains("line 1") && e.contains("repo"), "{e}");
        let mut r = record("../up");
        let e = parse(&r.to_string()).unwrap_err();
        assert!(e.contains("directory"), "{e}");
        r = record("o__r-1");
        r["FAIL_TO_PASS"] = Value::from("not json");
        let e = parse(&r.to_string()).unwrap_err();
        assert!(e.contains("FAIL_TO_PASS"), "{e}");
        let two = format!("{}\n{}", record("a"), record("a"));
        assert!(parse(&two).unwrap_err().contains("twice"));
    }

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        let all: Vec<Instance> = ["d", "a", "c", "b", "e"]
            .iter()
            .map(|id| from_value(&record(id)).expect("record"))
            .collect();
        let mut seen = Vec::new();
        for index in 0..2 {
            let shard = Some(Shard { index, count: 2 });
            for i in select(all.clone(), shard, &[]).expect("select") {
                seen.push(i.instance_id);
            }
        }
        seen.sort();
        assert_eq!(seen, ["a", "b", "c", "d", "e"]);
        assert!("2/2".parse::<Shard>().is_err());
        assert!("0/0".parse::<Shard>().is_err());
        assert_eq!("1/3".parse::<Shard>(), Ok(Shard { index: 1, count: 3 }));
        let only = select(all.clone(), None, &["c".into()]).expect("only");
        assert_eq!(only.len(), 1);
        assert!(select(all, None, &["zz".into()]).is_err());
    }

    #[test]
    fn a_slice_counts_in_the_files_order_and_a_shard_by_sorted_id() {
        let all: Vec<Instance> = ["d", "a", "c", "b"]
            .iter()
            .map(|id| from_value(&record(id)).expect("record"))
            .collect();
        let ids = |l: &[Instance]| l.iter().map(|i| i.instance_id.clone()).collect::<Vec<_>>();
        let first_two = Narrow {
            slice: Some(":2".parse().unwrap()),
            ..Narrow::default()
        };
        let picked = first_two.apply(select(all.clone(), None, &[]).unwrap());
        assert_eq!(ids(&picked), ["d", "a"]);
        // Shard 0/2 of sorted a b c d is a and c, kept in the file's order.
        let shard = select(all.clone(), Some(Shard { index: 0, count: 2 }), &[]).unwrap();
        assert_eq!(ids(&shard), ["a", "c"]);
        let mut reversed = all.clone();
        reversed.reverse();
        let shuffled = |list: Vec<Instance>| {
            Narrow {
                shuffle: Some(3),
                ..Narrow::default()
            }
            .apply(list)
        };
        assert_eq!(ids(&shuffled(all)), ids(&shuffled(reversed)));
    }

    #[test]
    fn filter_shuffle_and_slice_narrow_in_that_order() {
        let all: Vec<Instance> = (0..20)
            .map(|n| from_value(&record(&format!("o__r-{n:02}"))).expect("record"))
            .collect();
        let ids = |l: &[Instance]| l.iter().map(|i| i.instance_id.clone()).collect::<Vec<_>>();
        let narrow = Narrow {
            filter: Some(regex::Regex::new("-1").unwrap()),
            shuffle: None,
            slice: Some("2:4".parse().unwrap()),
        };
        assert_eq!(ids(&narrow.apply(all.clone())), ["o__r-12", "o__r-13"]);
        let shuffled = |seed| {
            Narrow {
                shuffle: Some(seed),
                ..Narrow::default()
            }
            .apply(all.clone())
        };
        assert_eq!(ids(&shuffled(7)), ids(&shuffled(7)));
        assert_ne!(ids(&shuffled(7)), ids(&shuffled(8)));
        assert_ne!(ids(&shuffled(7)), ids(&all));
        let mut back = ids(&shuffled(7));
        back.sort();
        assert_eq!(back, ids(&all));
        assert_eq!(
            "5:".parse::<Slice>(),
            Ok(Slice {
                start: 5,
                end: None
            })
        );
        assert_eq!(
            ":3".parse::<Slice>(),
            Ok(Slice {
                start: 0,
                end: Some(3)
            })
        );
        assert!("4:2".parse::<Slice>().is_err());
        assert!("x".parse::<Slice>().is_err());
        let past = Narrow {
            slice: Some("30:40".parse().unwrap()),
            ..Narrow::default()
        };
        assert!(past.apply(all).is_empty());
    }
}
