//! Standing approvals, as every client answers a Write confirm with them:
//! the first approval that covers the call, logged as the answer.

use std::sync::{Mutex, OnceLock, PoisonError};

use crate::guard::ConfirmKind;
use crate::guard::approvals::Approval;
use crate::prim::ConfirmRequest;
use crate::session::{Event, EventLog, event};

/// The standing approval that answers `req`, when one covers it (Write
/// confirms only: a Security confirm is never waived), with the answer
/// logged as the approval's.
pub fn standing_approval(
    approvals: &Mutex<Vec<Approval>>,
    req: &ConfirmRequest,
    log: &OnceLock<std::sync::Arc<EventLog>>,
) -> Option<Approval> {
    if req.kind != ConfirmKind::Write {
        return None;
    }
    let rel = req.path.unwrap_or("");
    let covering = approvals
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|a| a.covers(req.call, rel))
        .cloned()?;
    log_auto_yes(log, req, "standing-approval", covering.scope());
    Some(covering)
}

/// Logs a Write confirm answered yes without a person: by `by` (a
/// standing approval, or the `--approve writes` policy), under `scope`.
pub fn log_auto_yes(
    log: &OnceLock<std::sync::Arc<EventLog>>,
    req: &ConfirmRequest,
    by: &str,
    scope: String,
) {
    if let Some(log) = log.get() {
        let _ = log.emit(&Event::ConfirmAnswer(event::ConfirmAnswer {
            tool: req.call.decl.name.to_string(),
            path: req.path.map(str::to_string),
            kind: "write".into(),
            answer: "yes".into(),
            by: by.into(),
            scope: Some(scope),
            ..event::ConfirmAnswer::default()
        }));
    }
}
