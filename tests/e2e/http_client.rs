//! A tiny blocking HTTP/1.1 client over `std::net::TcpStream`, for the HTTP tests.
//!
//! Hand-rolled rather than a client crate: the tests need raw control (bad
//! headers, any method, a `Host` of our choosing), incremental reading of SSE
//! streams, and abrupt disconnects, all of which a full client hides; and it
//! adds no dependency to the build.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};

use serde_json::Value;

use crate::harness::PATIENCE;

/// A response head plus a reader positioned at the start of its body.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// Bytes left in the current chunk (chunked) or the body (Content-Length).
    left: Option<usize>,
    done: bool,
    /// Body bytes read but not yet consumed as SSE events.
    pending: String,
}

/// Sends one request and returns once the response head has arrived.
pub fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = TcpStream::connect(addr).expect("connect to wharf");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    stream.flush().unwrap();

    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).expect("header line");
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let (name, value) = trimmed.split_once(':').expect("header colon");
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let chunked = find("transfer-encoding").is_some_and(|v| v.contains("chunked"));
    let left = if chunked {
        Some(0)
    } else {
        find("content-length").map(|v| v.parse().unwrap())
    };
    Response {
        status,
        done: left == Some(0) && !chunked,
        headers,
        reader,
        chunked,
        left,
        pending: String::new(),
    }
}

/// POSTs a JSON body with the headers of an MCP client (Accept both kinds).
pub fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Response {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    all.extend_from_slice(headers);
    send(addr, "POST", "/mcp", &all, body.to_string().as_bytes())
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The next piece of the body, or `None` at its end.
    fn next_bytes(&mut self) -> Option<Vec<u8>> {
        if self.done {
            return None;
        }
        if self.chunked {
            if self.left == Some(0) {
                let mut size = String::new();
                self.reader.read_line(&mut size).ok()?;
                let size = usize::from_str_radix(size.trim(), 16).ok()?;
                if size == 0 {
                    self.done = true;
                    return None;
                }
                self.left = Some(size);
            }
            let mut data = vec![0; self.left.unwrap()];
            self.reader.read_exact(&mut data).ok()?;
            let mut crlf = [0; 2];
            self.reader.read_exact(&mut crlf).ok()?;
            self.left = Some(0);
            return Some(data);
        }
        let mut data = Vec::new();
        match self.left {
            Some(n) => {
                data.resize(n, 0);
                self.reader.read_exact(&mut data).ok()?;
            }
            None => {
                self.reader.read_to_end(&mut data).ok()?;
            }
        }
        self.done = true;
        Some(data)
    }

    /// The whole body as text.
    pub fn text(mut self) -> String {
        let mut all = Vec::new();
        while let Some(bytes) = self.next_bytes() {
            all.extend(bytes);
        }
        String::from_utf8(all).expect("UTF-8 body")
    }

    /// The whole body as JSON.
    pub fn json(self) -> Value {
        let text = self.text();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
    }

    /// The next SSE event carrying a JSON-RPC message (priming events with empty
    /// data and keep-alive comments are skipped), or `None` when the stream ends.
    pub fn next_event(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..end + 2).collect();
                let data: Vec<&str> = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(|d| d.strip_prefix(' ').unwrap_or(d))
                    .collect();
                let data = data.join("\n");
                if data.trim().is_empty() {
                    continue;
                }
                return Some(serde_json::from_str(&data).expect("SSE data is JSON"));
            }
            let bytes = self.next_bytes()?;
            self.pending.push_str(
                &String::from_utf8(bytes)
                    .expect("UTF-8 SSE")
                    .replace("\r\n", "\n"),
            );
        }
    }

    /// Whether the body ended as HTTP says a body ends (the last chunk, or
    /// all of its Content-Length), rather than by the connection breaking.
    pub fn ended_cleanly(&self) -> bool {
        self.done
    }

    /// Every SSE message until the stream ends.
    pub fn events(mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next_event()).collect()
    }
}
