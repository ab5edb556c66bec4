//! Answering one request: the action the script decides on (a status, a
//! hang-up, a reply), and the reply written in the endpoint's protocol,
//! whole or as a stream cut into pieces, with the reply's faults.

use std::io::{self, Write};
use std::net::{Shutdown, TcpStream};

use serde_json::{Value, json};

use super::{Action, Framing, Incoming, Shared, decide, wants_stream};
use crate::model::scripted::render::{pieces, render_whole};
use crate::model::scripted::{Chunking, Fault, ScriptedReply};
use crate::model::{Provider, Usage};

/// Answers one request; `Ok(false)` when the connection must close.
pub(super) fn respond(out: &mut TcpStream, req: Incoming, shared: &Shared) -> io::Result<bool> {
    let body: Value = serde_json::from_slice(&req.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&req.body).into_owned()));
    let (action, provider) = decide(shared, &req, &body);
    let keep = !req.close;
    match action {
        Action::NotFound => {
            let msg = format!(
                "scripted model: no endpoint {} {}; POST to /api/chat, /v1/chat/completions \
                 or /v1/messages",
                req.method, req.path
            );
            json_error(out, 404, provider, &msg, None)?;
            Ok(keep)
        }
        Action::Exhausted(n) => {
            let msg = format!(
                "scripted model: the script has no reply left (it has {n}); add replies to the \
                 script or end the conversation sooner"
            );
            json_error(out, 410, provider, &msg, None)?;
            Ok(keep)
        }
        Action::Status(code, retry_after) => {
            let msg = format!("scripted model: HTTP {code}, as the script says");
            json_error(out, code, provider, &msg, retry_after)?;
            Ok(keep)
        }
        Action::RefuseStream(code) => {
            let msg = "scripted model: streaming is not supported when tools are given; \
                       set stream to false";
            json_error(out, code, provider, msg, None)?;
            Ok(keep)
        }
        Action::DropStream => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
                content_type(provider.unwrap_or(Provider::OpenAi))
            );
            out.write_all(head.as_bytes())?;
            out.flush()?;
            let _ = out.shutdown(Shutdown::Both);
            Ok(false)
        }
        Action::Hangup => {
            let _ = out.shutdown(Shutdown::Both);
            Ok(false)
        }
        Action::Serve {
            mut reply,
            index,
            chunk_size,
            framing,
            quirks,
        } => {
            let stream = wants_stream(provider, &body);
            let provider = provider.unwrap_or(Provider::OpenAi);
            if reply.model.is_none() {
                reply.model = body.get("model").and_then(Value::as_str).map(String::from);
            }
            if reply.usage.is_none() {
                reply.usage = Some(estimate(&reply, req.body.len()));
            }
            if !stream {
                let whole = render_whole(provider, &reply, index, true);
                return whole_body(out, &reply.faults, &whole, shared).map(|open| open && keep);
            }
            let include_usage = quirks.stream_usage
                && (provider != Provider::OpenAi
                    || body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true)));
            let natural = pieces(provider, &reply, index, include_usage);
            let chunking = reply.chunking.clone().or(chunk_size.map(Chunking::Size));
            let writes = split(natural, chunking.as_ref());
            stream_body(out, provider, &reply.faults, writes, framing, shared)
                .map(|keep_open| keep_open && keep)
        }
    }
}

/// Writes a whole (non-streamed) JSON body with its length; `Ok(false)`
/// when the connection closed. Of the faults, a first-byte delay and a cut
/// apply.
fn whole_body(
    out: &mut TcpStream,
    faults: &[Fault],
    body: &[u8],
    shared: &Shared,
) -> io::Result<bool> {
    let mut cut = None;
    for f in faults {
        match f {
            Fault::DelayFirstByte(d) => shared.nap(*d),
            Fault::CutAfter(n) => cut = Some(*n),
            _ => {}
        }
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes())?;
    let sent = &body[..cut.unwrap_or(body.len()).min(body.len())];
    out.write_all(sent)?;
    out.flush()?;
    if cut.is_some() {
        let _ = out.shutdown(Shutdown::Both);
        return Ok(false);
    }
    Ok(true)
}

/// Rough token counts: four bytes a token.
fn estimate(reply: &ScriptedReply, request_bytes: usize) -> Usage {
    let out: usize = reply.text.len()
        + reply.reasoning.len()
        + reply
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments_text().len())
            .sum::<usize>();
    Usage {
        prompt_tokens: (request_bytes / 4) as u64,
        completion_tokens: (out / 4 + 1) as u64,
        ..Usage::default()
    }
}

/// The body cut into the writes the chunking asks for.
fn split(natural: Vec<Vec<u8>>, chunking: Option<&Chunking>) -> Vec<Vec<u8>> {
    match chunking {
        None => natural,
        Some(Chunking::Size(n)) => natural
            .concat()
            .chunks(*n.max(&1))
            .map(<[u8]>::to_vec)
            .collect(),
        Some(Chunking::SplitAt(points)) => {
            let body = natural.concat();
            let mut points: Vec<usize> = points
                .iter()
                .copied()
                .filter(|&p| p > 0 && p < body.len())
                .collect();
            points.sort_unstable();
            points.dedup();
            let mut out = Vec::new();
            let mut start = 0;
            for p in points {
                out.push(body[start..p].to_vec());
                start = p;
            }
            out.push(body[start..].to_vec());
            out
        }
    }
}

fn content_type(provider: Provider) -> &'static str {
    match provider {
        Provider::Ollama => "application/x-ndjson",
        Provider::OpenAi | Provider::Anthropic => "text/event-stream",
    }
}

/// Writes the streaming response; `Ok(false)` when the connection closed.
fn stream_body(
    out: &mut TcpStream,
    provider: Provider,
    faults: &[Fault],
    writes: Vec<Vec<u8>>,
    framing: Framing,
    shared: &Shared,
) -> io::Result<bool> {
    let mut delay_first = None;
    let mut between = None;
    let mut stall = None;
    let mut cut = None;
    for f in faults {
        match f {
            Fault::DelayFirstByte(d) => delay_first = Some(*d),
            Fault::DelayBetweenChunks(d) => between = Some(*d),
            Fault::StallAfter { bytes, duration } => stall = Some((*bytes, *duration)),
            Fault::CutAfter(n) => cut = Some(*n),
            _ => {}
        }
    }
    if let Some(d) = delay_first {
        shared.nap(d);
    }
    let framing_header = match framing {
        Framing::Chunked => "Transfer-Encoding: chunked\r\n",
        Framing::Close => "Connection: close\r\n",
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nCache-Control: no-cache\r\n{framing_header}\r\n",
        content_type(provider)
    );
    out.write_all(head.as_bytes())?;
    out.flush()?;

    let send = |out: &mut TcpStream, bytes: &[u8]| -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        match framing {
            Framing::Chunked => {
                let mut frame = format!("{:x}\r\n", bytes.len()).into_bytes();
                frame.extend_from_slice(bytes);
                frame.extend_from_slice(b"\r\n");
                out.write_all(&frame)?;
            }
            Framing::Close => out.write_all(bytes)?,
        }
        out.flush()
    };
    let limit = cut.unwrap_or(usize::MAX);
    let mut written = 0usize;
    for (i, piece) in writes.iter().enumerate() {
        if shared.stopped() {
            let _ = out.shutdown(Shutdown::Both);
            return Ok(false);
        }
        if i > 0
            && let Some(d) = between
        {
            shared.nap(d);
        }
        let mut piece: &[u8] = &piece[..piece.len().min(limit - written)];
        if let Some((at, d)) = stall
            && written + piece.len() > at
        {
            let (before, after) = piece.split_at(at.saturating_sub(written));
            send(out, before)?;
            written += before.len();
            shared.nap(d);
            stall = None;
            piece = after;
        }
        send(out, piece)?;
        written += piece.len();
        if written >= limit {
            break;
        }
    }
    if cut.is_some() {
        // No end of stream: the client must see a cut, not a reply.
        let _ = out.shutdown(Shutdown::Both);
        return Ok(false);
    }
    match framing {
        Framing::Chunked => {
            out.write_all(b"0\r\n\r\n")?;
            out.flush()?;
            Ok(true)
        }
        Framing::Close => {
            let _ = out.shutdown(Shutdown::Both);
            Ok(false)
        }
    }
}

/// An error in the shape the protocol's servers use.
fn json_error(
    out: &mut TcpStream,
    status: u16,
    provider: Option<Provider>,
    message: &str,
    retry_after: Option<u64>,
) -> io::Result<()> {
    let body = match provider {
        Some(Provider::Ollama) => json!({"error": message}),
        Some(Provider::Anthropic) => {
            let kind = match status {
                429 => "rate_limit_error",
                529 | 503 => "overloaded_error",
                404 => "not_found_error",
                400..=499 => "invalid_request_error",
                _ => "api_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        _ => json!({"error": {"message": message, "type": "scripted_error", "code": status}}),
    }
    .to_string();
    let reason = match status {
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Error",
    };
    let retry_after = retry_after
        .map(|s| format!("Retry-After: {s}\r\n"))
        .unwrap_or_default();
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n{retry_after}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    out.write_all(response.as_bytes())?;
    out.flush()
}
