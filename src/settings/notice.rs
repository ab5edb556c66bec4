//! The `notice` events every client logs from a model call's stream: what
//! a person should know that the reply itself does not show (the server
//! cannot stream tool calls, so text stops streaming; a failed attempt is
//! retried after a wait), each said once, in words, with what it means.

use crate::model::StreamEvent;
use crate::model::show_tokens;
use crate::session::event::{LlmResp, Notice};

/// The notice a stream event calls for, if any.
pub fn of_stream(ev: &StreamEvent) -> Option<Notice> {
    match ev {
        StreamEvent::StreamFallback { reason } => Some(Notice {
            kind: "stream_fallback".into(),
            message: format!(
                "the server cannot stream replies that may call tools ({reason}); nib asks \
                 without streaming from now on, so replies appear whole when they are done \
                 (set stream = false in the config to skip the first try)"
            ),
        }),
        StreamEvent::Retry {
            retry,
            retries,
            wait,
            error,
        } => {
            // The error without its advice (said once, with the error).
            let first = error.lines().next().unwrap_or_default();
            let first = first.split_once("; ").map_or(first, |(what, _)| what);
            Some(Notice {
                kind: "retry".into(),
                message: format!(
                    "retry {retry} of {retries} in {:.1} s: {first}",
                    wait.as_secs_f64()
                ),
            })
        }
        _ => None,
    }
}

/// The notice for a reply whose counts nib estimated, the first time one
/// comes (`already`: one was said).
pub fn of_estimate(resp: &LlmResp, already: bool) -> Option<Notice> {
    if already || !resp.usage.estimated {
        return None;
    }
    Some(Notice {
        kind: "estimated".into(),
        message: format!(
            "the server reported no token counts: nib estimates them from the text it sent \
             and got ({} in, {} out this step), shown with ~",
            show_tokens(resp.usage.prompt, true),
            show_tokens(resp.usage.completion, true)
        ),
    })
}
