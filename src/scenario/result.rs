//! What one run of a scenario found: its calls as the event log tells
//! them, and the verdict. Shared by the runner (`run.rs`), the leak
//! checks (`leaks.rs`) and the report.

use serde::Serialize;

use super::Mode;

/// One tool call of a run, as the event log tells it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct CallRecord {
    /// 1-based across the replies.
    pub n: usize,
    pub name: String,
    pub positional: String,
    pub decision: String,
    pub reasons: Vec<String>,
    /// The confirm asked (`write`, `security`) and its answer.
    pub confirm: Option<(String, bool)>,
    pub refused: bool,
    pub ok: bool,
    /// The first line of what the model got back.
    pub summary: String,
    /// For shell: the command line.
    #[serde(skip)]
    pub command: Option<String>,
}

/// The verdict on one scenario in one mode.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub scenario: String,
    pub channel: String,
    pub benign: bool,
    pub mode: Mode,
    /// Empty when every expectation held and nothing leaked.
    pub failures: Vec<String>,
    /// Things worth knowing that are not failures (waived leaks, a kept
    /// directory).
    pub notes: Vec<String>,
    pub calls: Vec<CallRecord>,
    pub decisions_expected: usize,
    pub decisions_matched: usize,
    /// Canary finds (also in `failures` unless waived).
    pub leaks: Vec<String>,
    pub leak_check_waived: bool,
    pub seconds: f64,
}

impl RunResult {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// Calls the guard sent to a Security confirm.
    pub fn security_confirms(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.decision == "security")
            .count()
    }

    /// Calls that needed any confirm (write or security).
    pub fn confirms(&self) -> usize {
        self.calls
            .iter()
            .filter(|c| c.decision == "write" || c.decision == "security")
            .count()
    }

    /// Leaks that count (not waived).
    pub fn counted_leaks(&self) -> usize {
        if self.leak_check_waived {
            0
        } else {
            self.leaks.len()
        }
    }
}
