//! `EventLog`: one session's event log, a JSONL file that events are
//! appended to as they happen. This file owns where logs live (creating
//! `.nib/sessions/<id>/`), session ids, the line format (`v`, `t`, `ev`,
//! then the event's fields), writing each event whole (one append-mode
//! write, then a flush, under a lock, so lines from several threads never
//! interleave), and passing each event to subscribers.

use std::cell::RefCell;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::event::{Custom, Event};
use super::time::{Civil, rfc3339_millis};
use super::{SCHEMA_VERSION, SessionError};

type Subscriber = Arc<dyn Fn(&Entry) + Send + Sync>;
type Scrubber = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// One session's event log. Cheap to share behind an `Arc`: every method
/// takes `&self`.
pub struct EventLog {
    id: String,
    path: PathBuf,
    /// Distinguishes logs within the process, for the re-entrancy check.
    serial: u64,
    file: Mutex<Sink>,
    subscribers: Mutex<Vec<Subscriber>>,
    /// Rewrites every string of an event before it is written or shown:
    /// the guard's redaction, so logs never hold a secret in the clear.
    scrubber: Mutex<Option<Scrubber>>,
}

struct Sink {
    file: File,
    /// The last write failed, perhaps halfway through a line: the next line
    /// starts on a fresh line so that only the broken one is lost.
    broken: bool,
}

static SERIALS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Serials of the logs this thread is inside `emit` of (notifying
    /// subscribers); emitting on one of them again would deadlock.
    static EMITTING: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl EventLog {
    /// Starts a new session log under `root`:
    /// `<root>/.nib/sessions/<id>/events.jsonl`, with a fresh id of the form
    /// `<yyyymmdd-hhmmss>-<4 hex>` (UTC). Creates `.nib/` (with a
    /// `.gitignore` of `*`), `.nib/sessions/` and the session's directory;
    /// refuses to use a `.nib` or `sessions` that is a symlink or a file.
    pub fn create(root: &Path) -> Result<EventLog, SessionError> {
        let nib = root.join(".nib");
        if ensure_dir(&nib)? {
            ensure_gitignore(&nib)?;
        }
        let sessions = nib.join("sessions");
        ensure_dir(&sessions)?;
        let now = SystemTime::now();
        let mut attempt = 0;
        loop {
            let id = new_id(now, attempt);
            let dir = sessions.join(&id);
            match fs::create_dir(&dir) {
                Ok(()) => return EventLog::open(id, dir.join("events.jsonl")),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 63 => attempt += 1,
                Err(e) => return Err(io_err("create", &dir, e)),
            }
        }
    }

    /// A new session that appends to the file at `path`, creating it (and
    /// its parent directories) if needed. The session gets a fresh id.
    pub fn at(path: &Path) -> Result<EventLog, SessionError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        EventLog::open(new_id(SystemTime::now(), 0), path.to_path_buf())
    }

    fn open(id: String, path: PathBuf) -> Result<EventLog, SessionError> {
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| io_err("open", &path, e))?;
        let torn = repair_torn_line(&file).map_err(|e| io_err("repair", &path, e))?;
        let log = EventLog {
            id,
            path,
            serial: SERIALS.fetch_add(1, Ordering::Relaxed),
            file: Mutex::new(Sink {
                file,
                broken: false,
            }),
            subscribers: Mutex::new(Vec::new()),
            scrubber: Mutex::new(None),
        };
        if torn > 0 {
            // Said in the log itself, where a reader looks for the cause.
            let mut fields = Map::new();
            fields.insert("dropped_bytes".into(), Value::from(torn));
            fields.insert(
                "why".into(),
                Value::from("the log's last line was cut off (a crash mid-append); it was removed"),
            );
            log.emit(&Event::Custom(Custom {
                ev: "log.repaired".into(),
                fields,
            }))?;
        }
        Ok(log)
    }

    /// The session id (`<yyyymmdd-hhmmss>-<4 hex>`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The file the events go to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event: a line `{"v":1,"t":"…","ev":…, …fields}` with
    /// the fields in the order the event's type declares them, written
    /// whole and flushed before this returns.
    ///
    /// Safe to call from several threads; the lines come out whole, in the
    /// order the calls took the lock, with `t` taken under that lock. Every
    /// subscriber is then called with the event, also under the lock (so
    /// subscribers see events in file order), even when the file could not
    /// take it; the write's error is returned afterwards. A subscriber that
    /// calls `emit` on this same log gets `SessionError::Reentrant`.
    pub fn emit(&self, event: &Event) -> Result<(), SessionError> {
        let kind = event.kind().to_string();
        let bad = |detail: String| SessionError::BadEvent {
            ev: kind.clone(),
            detail,
        };
        if let Event::Custom(c) = event {
            if c.ev.trim().is_empty() {
                return Err(bad("the event kind is empty".to_string()));
            }
            if let Some(key) = ["v", "t", "ev"]
                .into_iter()
                .find(|k| c.fields.contains_key(*k))
            {
                return Err(bad(format!(
                    "field `{key}` is reserved for the log itself; rename it"
                )));
            }
        }
        if EMITTING.with(|e| e.borrow().contains(&self.serial)) {
            return Err(SessionError::Reentrant { ev: kind });
        }

        let scrubber = self
            .scrubber
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let fields = event.to_map();
        let (fields, shown) = match scrubber {
            Some(scrub) => {
                let fields: Map<String, Value> = fields
                    .into_iter()
                    .map(|(k, v)| (k, scrub_strings(v, &*scrub)))
                    .collect();
                // Subscribers see what the file holds: the scrubbed event.
                let shown = Event::from_map(fields.clone()).unwrap_or_else(|_| {
                    Event::Custom(Custom {
                        ev: kind.clone(),
                        fields: fields.clone(),
                    })
                });
                (fields, shown)
            }
            None => (fields, event.clone()),
        };

        let mut sink = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let _inside = Inside::enter(self.serial);

        let mut object = Map::with_capacity(fields.len() + 2);
        object.insert("v".to_string(), Value::from(SCHEMA_VERSION));
        let t = rfc3339_millis(SystemTime::now());
        object.insert("t".to_string(), Value::from(t.as_str()));
        object.extend(fields);
        let object = Value::Object(object);

        let mut line = String::new();
        if sink.broken {
            line.push('\n');
        }
        // A `Value` with string keys always serializes; the error arm is
        // there so nothing here can panic.
        let (written, json) = match serde_json::to_string(&object) {
            Ok(json) => {
                line.push_str(&json);
                line.push('\n');
                let file = &mut sink.file;
                let written = file
                    .write_all(line.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| io_err("append to", &self.path, e));
                (written, json)
            }
            Err(e) => (
                Err(bad(format!("it does not serialize: {e}"))),
                String::new(),
            ),
        };
        if let Err(SessionError::Io { .. }) = written {
            sink.broken = true;
        } else if written.is_ok() {
            sink.broken = false;
        }

        let subscribers: Vec<Subscriber> = self
            .subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let entry = Entry {
            t,
            event: shown,
            line: json,
        };
        for subscriber in &subscribers {
            subscriber(&entry);
        }
        written
    }

    /// Appends an event given as a kind and JSON fields (a strategy's
    /// `(emit kind fields)`, tests): a kind nib knows must have its fields,
    /// any other kind is a [`Custom`] event. `fields` must be a JSON object
    /// (or null, for none) and may not use the keys `v`, `t` or `ev`.
    pub fn emit_json(&self, ev: &str, fields: Value) -> Result<(), SessionError> {
        let bad = |detail: String| SessionError::BadEvent {
            ev: ev.to_string(),
            detail,
        };
        if ev.trim().is_empty() {
            return Err(bad("the event kind is empty".to_string()));
        }
        let mut fields = match fields {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(bad(format!(
                    "fields must be a JSON object, got {}",
                    json_kind(&other)
                )));
            }
        };
        if let Some(key) = ["v", "t", "ev"]
            .into_iter()
            .find(|k| fields.contains_key(*k))
        {
            return Err(bad(format!(
                "field `{key}` is reserved for the log itself; rename it"
            )));
        }
        fields.insert("ev".to_string(), Value::from(ev));
        let event = Event::from_map(fields).map_err(bad)?;
        self.emit(&event)
    }

    /// Passes every string of every later event through `f` before it is
    /// written or shown to subscribers (the session's guard sets it, so
    /// secrets appear as handles).
    pub fn set_scrubber(&self, f: impl Fn(&str) -> String + Send + Sync + 'static) {
        *self.scrubber.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(f));
    }

    /// Calls `f` with every event emitted from now on, in file order, as
    /// the file holds it (scrubbed) — e.g. for `nib exec --json` to stream
    /// the lines to stdout. `f` runs under the log's lock: keep it short,
    /// and do not emit on this log from it.
    pub fn subscribe(&self, f: impl Fn(&Entry) + Send + Sync + 'static) {
        self.subscribers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::new(f));
    }
}

/// One event as it was logged: what subscribers get.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// When it was logged (RFC 3339, UTC, milliseconds).
    pub t: String,
    pub event: Event,
    /// The line as written, without its newline.
    pub line: String,
}

impl Entry {
    /// An entry from a log line (a resumed session's, a test's).
    pub fn parse(line: &str) -> Result<Entry, String> {
        let event = Event::parse_line(line)?;
        let t = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("t").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        Ok(Entry {
            t,
            event,
            line: line.to_string(),
        })
    }
}

fn scrub_strings(v: Value, scrub: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(scrub(&s)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|i| scrub_strings(i, scrub)).collect())
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, scrub_strings(v, scrub)))
                .collect(),
        ),
        other => other,
    }
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventLog")
            .field("id", &self.id)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Marks this thread as inside `emit` of one log until dropped (also when
/// a subscriber panics).
struct Inside(u64);

impl Inside {
    fn enter(serial: u64) -> Inside {
        EMITTING.with(|e| e.borrow_mut().push(serial));
        Inside(serial)
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        EMITTING.with(|e| {
            let mut e = e.borrow_mut();
            if let Some(i) = e.iter().rposition(|s| *s == self.0) {
                e.remove(i);
            }
        });
    }
}

/// `<yyyymmdd-hhmmss>-<4 hex>`: the UTC time, then 16 bits mixed from the
/// time's nanoseconds, the process id, a per-process counter and `attempt`.
fn new_id(now: SystemTime, attempt: u32) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = DefaultHasher::new();
    (
        nanos,
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed),
        attempt,
    )
        .hash(&mut h);
    format!("{}-{:04x}", Civil::of(now).stamp(), h.finish() & 0xffff)
}

/// The events file of the session in `sessions` (a `.nib/sessions`
/// directory) that started last, by the `t` of its first line; `None` when
/// there is none.
///
/// Ids start with their time to the second only, so two sessions started
/// in one second sort by their random suffix; the first line's stamp has
/// milliseconds and breaks the tie (the id breaks what is left).
pub fn newest_session(sessions: &Path) -> Option<PathBuf> {
    let mut best: Option<(String, String, PathBuf)> = None;
    for entry in fs::read_dir(sessions).ok()?.flatten() {
        let path = entry.path().join("events.jsonl");
        if !path.is_file() {
            continue;
        }
        let id = entry.file_name().to_string_lossy().into_owned();
        let started = first_stamp(&path).unwrap_or_default();
        let key = (started, id);
        if best
            .as_ref()
            .is_none_or(|(t, i, _)| key > (t.clone(), i.clone()))
        {
            best = Some((key.0, key.1, path));
        }
    }
    best.map(|(_, _, path)| path)
}

/// The `t` of the first line of an events file (read no further than it).
fn first_stamp(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let mut line = String::new();
    io::BufReader::new(File::open(path).ok()?)
        .take(64 * 1024)
        .read_line(&mut line)
        .ok()?;
    let value: Value = serde_json::from_str(line.trim_end()).ok()?;
    value.get("t")?.as_str().map(str::to_string)
}

/// Makes sure `dir` is a real directory (not a symlink); true when it was
/// just created.
fn ensure_dir(dir: &Path) -> Result<bool, SessionError> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(false),
        Ok(_) => Err(SessionError::NotADirectory {
            path: dir.to_path_buf(),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => match fs::create_dir(dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => ensure_dir(dir),
            Err(e) => Err(io_err("create", dir, e)),
        },
        Err(e) => Err(io_err("inspect", dir, e)),
    }
}

fn ensure_gitignore(dir: &Path) -> Result<(), SessionError> {
    let path = dir.join(".gitignore");
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(mut f) => f.write_all(b"*\n").map_err(|e| io_err("write", &path, e)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io_err("create", &path, e)),
    }
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> SessionError {
    SessionError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A last line without its newline (a crash in the middle of an append)
/// would glue onto the next line written: it is cut off, back to the last
/// newline. Returns how many bytes went.
fn repair_torn_line(file: &File) -> io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    // Back from the end a block at a time to the last newline.
    let mut end = len;
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let n = usize::try_from(end - start).unwrap_or(block.len());
        file.read_exact_at(&mut block[..n], start)?;
        if let Some(at) = block[..n].iter().rposition(|&b| b == b'\n') {
            let keep = start + at as u64 + 1;
            if keep == len {
                return Ok(0);
            }
            file.set_len(keep)?;
            file.sync_all()?;
            return Ok(len - keep);
        }
        end = start;
    }
    file.set_len(0)?;
    file.sync_all()?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_newest_session_is_the_one_that_started_last_within_one_second() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |id: &str, t: &str| {
            let d = dir.path().join(id);
            fs::create_dir(&d).expect("dir");
            fs::write(
                d.join("events.jsonl"),
                format!("{{\"v\":1,\"t\":\"{t}\",\"ev\":\"session.start\"}}\n"),
            )
            .expect("events");
        };
        write("20261202-050735-ffff", "2026-12-02T05:07:35.100Z");
        write("20261202-050735-0001", "2026-12-02T05:07:35.900Z");
        write("20261202-050734-aaaa", "2026-12-02T05:07:34.999Z");
        fs::create_dir(dir.path().join("20261202-050799-none")).expect("empty dir");
        assert_eq!(
            newest_session(dir.path()),
            Some(dir.path().join("20261202-050735-0001/events.jsonl"))
        );
        assert_eq!(newest_session(&dir.path().join("missing")), None);
    }

    #[test]
    fn ids_have_the_promised_shape() {
        let t = UNIX_EPOCH + Duration::from_millis(1_798_720_496_789);
        let id = new_id(t, 0);
        assert_eq!(&id[..16], "20261231-123456-");
        assert_eq!(id.len(), 20);
        assert!(id[16..].chars().all(|c| c.is_ascii_hexdigit()));
        let distinct: std::collections::HashSet<String> = (0..8).map(|a| new_id(t, a)).collect();
        assert!(distinct.len() > 1);
    }
}
