//! The console's HTTP/1.1, by hand: one request per connection (the
//! response says `Connection: close`), a bounded reader for the request
//! line, headers and a `Content-Length` body, the response writer, and the
//! gate every request passes before it is routed: the Host header (DNS
//! rebinding), the Origin and `Sec-Fetch-Site` headers (cross-site
//! requests), and the token the printed URL carries.
//!
//! Why no server crate: the console serves one person's browser on
//! loopback, a handful of connections, a few routes and one event stream;
//! this file is the whole protocol it needs, and every check is in sight.

use std::io::{BufRead, Write};

/// The most bytes of request line and headers read.
const MAX_HEAD: usize = 32 * 1024;
/// The most bytes of body read (an edited file comes in a body).
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// A parsed request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The path without its query, percent-decoded.
    pub path: String,
    pub query: Vec<(String, String)>,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A request that could not be read: the status to answer with and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl Refusal {
    pub fn new(status: u16, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
        }
    }
}

/// Read one request. `Ok(None)`: the peer closed before sending anything.
pub fn read_request(r: &mut impl BufRead) -> Result<Option<Request>, Refusal> {
    let mut head = 0usize;
    let mut line = String::new();
    let mut read_line = |line: &mut String| -> Result<usize, Refusal> {
        line.clear();
        let limit = (MAX_HEAD - head.min(MAX_HEAD)) as u64 + 1;
        let n = std::io::Read::take(&mut *r, limit)
            .read_line(line)
            .map_err(|e| Refusal::new(400, format!("cannot read the request: {e}")))?;
        head += n;
        if head > MAX_HEAD {
            return Err(Refusal::new(431, "the request's headers are too large"));
        }
        Ok(n)
    };
    if read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.trim_end().split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::new(
            400,
            "a request line is METHOD TARGET HTTP/1.1",
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(Refusal::new(505, "only HTTP/1.x is spoken here"));
    }
    let method = method.to_string();
    let (raw_path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let path = percent_decode(raw_path);
    let query = raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect();
    let mut headers = Vec::new();
    loop {
        if read_line(&mut line)? == 0 {
            return Err(Refusal::new(400, "the request ended inside its headers"));
        }
        let l = line.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        let Some((name, value)) = l.split_once(':') else {
            return Err(Refusal::new(400, format!("not a header line: {l:?}")));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        if headers.len() > 100 {
            return Err(Refusal::new(431, "too many headers"));
        }
    }
    let mut req = Request {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    };
    if req.header("transfer-encoding").is_some() {
        return Err(Refusal::new(
            411,
            "send the body with a Content-Length, not chunked",
        ));
    }
    let length = match req.header("content-length") {
        None => 0,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| Refusal::new(400, format!("Content-Length {v:?} is not a number")))?,
    };
    if length > MAX_BODY {
        return Err(Refusal::new(
            413,
            format!("the body is {length} bytes; at most {MAX_BODY} are read"),
        ));
    }
    req.body = vec![0; length];
    r.read_exact(&mut req.body)
        .map_err(|e| Refusal::new(400, format!("the body ended early: {e}")))?;
    Ok(Some(req))
}

/// `%41` and `+` decoded (invalid escapes kept as written).
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A response to write.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(status: u16, value: &serde_json::Value) -> Response {
        Response {
            status,
            content_type: "application/json; charset=utf-8",
            body: value.to_string().into_bytes(),
        }
    }

    pub fn text(status: u16, text: impl Into<String>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.into().into_bytes(),
        }
    }

    pub fn error(status: u16, message: impl Into<String>) -> Response {
        Response::json(status, &serde_json::json!({"error": message.into()}))
    }
}

/// Headers every response carries: nothing cached, nothing framed, no
/// script or connection to anywhere but this server, no referrer (the URL
/// holds the token).
const SAFETY_HEADERS: &str = "Cache-Control: no-store\r\n\
X-Content-Type-Options: nosniff\r\n\
X-Frame-Options: DENY\r\n\
Referrer-Policy: no-referrer\r\n\
Cross-Origin-Resource-Policy: same-origin\r\n\
Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
frame-ancestors 'none'\r\n";

pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        421 => "Misdirected Request",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

pub fn write_response(w: &mut impl Write, resp: &Response) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n{SAFETY_HEADERS}\r\n",
        resp.status,
        reason_phrase(resp.status),
        resp.content_type,
        resp.body.len()
    );
    w.write_all(head.as_bytes())?;
    w.write_all(&resp.body)?;
    w.flush()
}

/// The head of an event stream (the body follows as events, until the
/// connection closes).
pub fn write_stream_head(w: &mut impl Write) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n{SAFETY_HEADERS}\r\n"
    );
    w.write_all(head.as_bytes())?;
    w.flush()
}

/// What a request must show to be served.
#[derive(Debug, Clone)]
pub struct Gate {
    pub port: u16,
    pub token: String,
}

impl Gate {
    /// The origins the page itself has.
    fn own_origin(&self, origin: &str) -> bool {
        let origin = origin.to_ascii_lowercase();
        origin == format!("http://127.0.0.1:{}", self.port)
            || origin == format!("http://localhost:{}", self.port)
    }

    /// Whether `req` may be served: the Host this server is (so a DNS name
    /// rebound to 127.0.0.1 gets nothing), no other site's Origin or
    /// `Sec-Fetch-Site`, and the token (a header for anything that changes
    /// state, which a cross-site form cannot set; the query for the page
    /// and its event stream, which a browser opens by URL).
    pub fn admit(&self, req: &Request) -> Result<(), Refusal> {
        let host = req.header("host").unwrap_or("").to_ascii_lowercase();
        if host != format!("127.0.0.1:{}", self.port) && host != format!("localhost:{}", self.port)
        {
            return Err(Refusal::new(
                421,
                format!(
                    "this console answers only to http://127.0.0.1:{}/ (the request named host {host:?})",
                    self.port
                ),
            ));
        }
        if let Some(origin) = req.header("origin")
            && !self.own_origin(origin)
        {
            return Err(Refusal::new(
                403,
                format!(
                    "requests from {origin} are not accepted: the console serves only its own page"
                ),
            ));
        }
        if let Some(site) = req.header("sec-fetch-site")
            && site != "same-origin"
            && site != "none"
        {
            return Err(Refusal::new(
                403,
                format!("a {site} request is not accepted: the console serves only its own page"),
            ));
        }
        let changes = req.method != "GET" && req.method != "HEAD";
        let given = if changes {
            if req.header("origin").is_none() {
                return Err(Refusal::new(
                    403,
                    "a request that changes something must carry the page's Origin",
                ));
            }
            if !req
                .header("content-type")
                .is_some_and(|c| c.starts_with("application/json"))
            {
                return Err(Refusal::new(415, "send application/json"));
            }
            req.header("x-nib-token")
        } else {
            req.header("x-nib-token").or(req.query("token"))
        };
        match given {
            Some(t) if same(t.as_bytes(), self.token.as_bytes()) => Ok(()),
            Some(_) => Err(Refusal::new(
                401,
                "wrong token: open the URL `nib console` printed (it carries the token)",
            )),
            None => Err(Refusal::new(
                401,
                "no token: open the URL `nib console` printed (it carries the token)",
            )),
        }
    }
}

/// Compares in time independent of where the inputs differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A fresh token: 32 hex digits from the OS's random source.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    let mut f = std::fs::File::open("/dev/urandom")
        .map_err(|e| format!("cannot read /dev/urandom for the console's token: {e}"))?;
    std::io::Read::read_exact(&mut f, &mut bytes)
        .map_err(|e| format!("cannot read /dev/urandom for the console's token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<Request>, Refusal> {
        read_request(&mut std::io::Cursor::new(text.as_bytes().to_vec()))
    }

    #[test]
    fn a_request_is_read_with_its_query_headers_and_body() {
        let req = parse(
            "POST /api/confirm/3?token=ab%20c&x HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 4\r\n\r\nbody",
        )
        .unwrap()
        .unwrap();
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/api/confirm/3");
        assert_eq!(req.query("token"), Some("ab c"));
        assert_eq!(req.query("x"), Some(""));
        assert_eq!(req.header("host"), Some("127.0.0.1:9"));
        assert_eq!(req.body, b"body");
        assert_eq!(parse("").unwrap(), None);
    }

    #[test]
    fn bad_requests_are_refused_with_a_status() {
        assert_eq!(parse("GET\r\n\r\n").unwrap_err().status, 400);
        assert_eq!(
            parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
                .unwrap_err()
                .status,
            411
        );
        assert_eq!(
            parse("POST / HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n")
                .unwrap_err()
                .status,
            413
        );
        let huge = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(parse(&huge).unwrap_err().status, 431);
        assert_eq!(percent_decode("%zz%41+%"), "%zzA %");
    }

    #[test]
    fn the_gate_wants_the_host_the_origin_and_the_token() {
        let gate = Gate {
            port: 7,
            token: "t0k".into(),
        };
        let req = |method: &str, headers: &[(&str, &str)], token: Option<&str>| Request {
            method: method.into(),
            path: "/".into(),
            query: token
                .map(|t| vec![("token".to_string(), t.to_string())])
                .unwrap_or_default(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: Vec::new(),
        };
        let host = ("host", "127.0.0.1:7");
        assert!(gate.admit(&req("GET", &[host], Some("t0k"))).is_ok());
        assert!(
            gate.admit(&req("GET", &[("host", "localhost:7")], Some("t0k")))
                .is_ok()
        );
        assert_eq!(
            gate.admit(&req("GET", &[host], None)).unwrap_err().status,
            401
        );
        assert_eq!(
            gate.admit(&req("GET", &[host], Some("t0K")))
                .unwrap_err()
                .status,
            401
        );
        let rebound = ("host", "evil.example:7");
        assert_eq!(
            gate.admit(&req("GET", &[rebound], Some("t0k")))
                .unwrap_err()
                .status,
            421
        );
        let foreign = ("origin", "http://evil.example");
        assert_eq!(
            gate.admit(&req("GET", &[host, foreign], Some("t0k")))
                .unwrap_err()
                .status,
            403
        );
        let cross = ("sec-fetch-site", "cross-site");
        assert_eq!(
            gate.admit(&req("GET", &[host, cross], Some("t0k")))
                .unwrap_err()
                .status,
            403
        );
        // A change needs the Origin, JSON and the token in a header.
        let own = ("origin", "http://127.0.0.1:7");
        let json = ("content-type", "application/json");
        let header_token = ("x-nib-token", "t0k");
        assert!(
            gate.admit(&req("POST", &[host, own, json, header_token], None))
                .is_ok()
        );
        assert_eq!(
            gate.admit(&req("POST", &[host, json, header_token], None))
                .unwrap_err()
                .status,
            403
        );
        assert_eq!(
            gate.admit(&req("POST", &[host, own, header_token], None))
                .unwrap_err()
                .status,
            415
        );
        assert_eq!(
            gate.admit(&req("POST", &[host, own, json], Some("t0k")))
                .unwrap_err()
                .status,
            401
        );
        assert_eq!(new_token().unwrap().len(), 32);
    }
}
