//! One keep-alive HTTP/1.1 connection to Wharf's `/mcp` (and `/metrics`).
//!
//! Hand-rolled (a few hundred lines) rather than a client crate, as the e2e
//! tests do: nothing between a measurement and the socket, full control of
//! headers, incremental reading of SSE streams, and no new dependency tree.
//!
//! Requests are 2026-07-28 ones unless the connection opened a legacy session
//! with [`Connection::handshake`]: the `MCP-Protocol-Version`/`Mcp-Method`/
//! `Mcp-Name` headers, as `tests/e2e/harness.rs` sends them; in a session,
//! the `Mcp-Session-Id` on every request.

use std::net::SocketAddr;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{LEGACY, MODERN};

/// A keep-alive connection, and the legacy session it opened, if any.
pub struct Connection {
    stream: TcpStream,
    addr: SocketAddr,
    buffer: Vec<u8>,
    /// The legacy session, once [`handshake`](Self::handshake) opened one.
    session: Option<String>,
    /// The last response said `Connection: close` (nginx does after
    /// `keepalive_requests`, 1,000 by default): the next request goes on a
    /// new connection, in the same session.
    closing: bool,
}

/// A whole response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// `Content-Type: text/event-stream`.
    pub event_stream: bool,
}

impl Reply {
    /// The first value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: each SSE event's data, or the body.
    pub fn messages(&self) -> Result<Vec<Value>> {
        if !self.event_stream {
            return Ok(vec![
                serde_json::from_slice(&self.body).context("a JSON response body")?,
            ]);
        }
        let text = String::from_utf8_lossy(&self.body).replace("\r\n", "\n");
        text.split("\n\n")
            .filter_map(event_data)
            .map(|data| serde_json::from_str(&data).context("SSE data that is not JSON"))
            .collect()
    }
}

/// The head of a response: status, headers, and how its body is framed.
struct Head {
    status: u16,
    headers: Vec<(String, String)>,
    framing: Framing,
    event_stream: bool,
}

#[derive(Debug, Clone, Copy)]
enum Framing {
    Length(usize),
    Chunked,
}

impl Connection {
    pub async fn open(addr: SocketAddr) -> Result<Self> {
        let stream = TcpStream::connect(addr)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(Self {
            stream,
            addr,
            buffer: Vec::with_capacity(16 << 10),
            session: None,
            closing: false,
        })
    }

    /// Connects again if the server said it closes this connection.
    async fn reopen_if_closing(&mut self) -> Result<()> {
        if self.closing {
            let stream = TcpStream::connect(self.addr)
                .await
                .with_context(|| format!("connecting to {} again", self.addr))?;
            stream.set_nodelay(true)?;
            self.stream = stream;
            self.buffer.clear();
            self.closing = false;
        }
        Ok(())
    }

    /// The legacy session id, once opened.
    pub fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Opens a legacy session: `initialize`, then `notifications/initialized`.
    /// Every later request carries the session id, as SDK 1.x clients send it.
    pub async fn handshake(&mut self) -> Result<()> {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "wharf-wire", "version": "0"}
            }
        });
        let reply = self
            .send(&serde_json::to_vec(&initialize)?, None, "POST")
            .await?;
        if reply.status != 200 || self.session.is_none() {
            bail!(
                "initialize: HTTP {}, session {:?}: {}",
                reply.status,
                self.session,
                String::from_utf8_lossy(&reply.body)
            );
        }
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let reply = self.send(initialized, None, "POST").await?;
        if reply.status != 202 {
            bail!("notifications/initialized: HTTP {}", reply.status);
        }
        Ok(())
    }

    /// POSTs a request for the tool `name` (a `tools/list` if empty) and returns
    /// the status and body (the last SSE event's data if the answer is a stream).
    pub async fn post(&mut self, body: &[u8], name: &str) -> Result<(u16, Vec<u8>)> {
        let method = if name.is_empty() {
            "tools/list"
        } else {
            "tools/call"
        };
        let reply = self.send(body, Some((method, name)), "POST").await?;
        if reply.event_stream {
            return Ok((reply.status, last_event_data(&reply.body)));
        }
        Ok((reply.status, reply.body))
    }

    /// POSTs a JSON-RPC `body` for `method` (`name`: the tool, prompt or
    /// resource it names, or empty), with the 2026-07-28 headers or in the
    /// session, and returns the whole response.
    pub async fn request(&mut self, body: &[u8], method: &str, name: &str) -> Result<Reply> {
        self.send(body, Some((method, name)), "POST").await
    }

    /// `GET path` on this connection (e.g. `/metrics`).
    pub async fn get(&mut self, path: &str) -> Result<Reply> {
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n\r\n",
            self.addr
        );
        self.reopen_if_closing().await?;
        self.stream.write_all(head.as_bytes()).await?;
        self.read_response().await
    }

    /// POSTs `body` like [`request`](Self::request) and returns once the head
    /// has arrived: the status, and the body as a stream of events (a
    /// `subscriptions/listen` stream).
    pub async fn open_stream(
        mut self,
        body: &[u8],
        method: &str,
        name: &str,
    ) -> Result<(u16, EventStream)> {
        self.write_request("POST", body, Some((method, name)))
            .await?;
        self.stream_response().await
    }

    /// Opens the legacy session's GET stream (server notifications).
    pub async fn open_get_stream(mut self) -> Result<(u16, EventStream)> {
        if self.session.is_none() {
            bail!("a GET stream needs a legacy session");
        }
        self.write_request("GET", b"", None).await?;
        self.stream_response().await
    }

    async fn stream_response(mut self) -> Result<(u16, EventStream)> {
        let head = self.read_head().await?;
        Ok((
            head.status,
            EventStream {
                connection: self,
                framing: head.framing,
                chunk_left: 0,
                pending: String::new(),
                ended: false,
            },
        ))
    }

    /// Sends `body` (see [`write_request`](Self::write_request)) and reads
    /// the whole response.
    async fn send(
        &mut self,
        body: &[u8],
        routing: Option<(&str, &str)>,
        verb: &str,
    ) -> Result<Reply> {
        self.write_request(verb, body, routing).await?;
        self.read_response().await
    }

    /// Writes a request to `/mcp`; `routing` (method and name) goes in the
    /// 2026-07-28 headers unless this connection has a legacy session.
    async fn write_request(
        &mut self,
        verb: &str,
        body: &[u8],
        routing: Option<(&str, &str)>,
    ) -> Result<()> {
        let mut head = format!(
            "{verb} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\n",
            self.addr
        );
        match (&self.session, routing) {
            (Some(session), _) => head.push_str(&format!(
                "MCP-Protocol-Version: {LEGACY}\r\nMcp-Session-Id: {session}\r\n"
            )),
            (None, Some((method, name))) => {
                head.push_str(&format!(
                    "MCP-Protocol-Version: {MODERN}\r\nMcp-Method: {method}\r\n"
                ));
                if !name.is_empty() {
                    head.push_str(&format!("Mcp-Name: {name}\r\n"));
                }
            }
            (None, None) => {}
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.reopen_if_closing().await?;
        self.stream.write_all(&request).await?;
        Ok(())
    }

    async fn read_response(&mut self) -> Result<Reply> {
        let head = self.read_head().await?;
        let body = match head.framing {
            Framing::Chunked => self.read_chunked().await?,
            Framing::Length(length) => {
                while self.buffer.len() < length {
                    self.fill().await?;
                }
                self.buffer.drain(..length).collect()
            }
        };
        self.closing = head
            .headers
            .iter()
            .any(|(name, value)| name == "connection" && value.eq_ignore_ascii_case("close"));
        Ok(Reply {
            status: head.status,
            headers: head.headers,
            body,
            event_stream: head.event_stream,
        })
    }

    async fn read_head(&mut self) -> Result<Head> {
        let head_end = loop {
            if let Some(at) = find(&self.buffer, b"\r\n\r\n") {
                break at;
            }
            self.fill().await?;
        };
        let text = std::str::from_utf8(&self.buffer[..head_end]).context("response head")?;
        let status: u16 = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .context("status line")?;
        let mut length = None;
        let mut chunked = false;
        let mut event_stream = false;
        let mut headers = Vec::new();
        for line in text.lines().skip(1) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            match name.as_str() {
                "content-length" => {
                    length = Some(value.parse::<usize>().context("content-length")?);
                }
                "transfer-encoding" if value.contains("chunked") => chunked = true,
                "mcp-session-id" => self.session = Some(value.to_string()),
                "content-type" => event_stream = value.starts_with("text/event-stream"),
                _ => {}
            }
            headers.push((name, value.to_string()));
        }
        self.buffer.drain(..head_end + 4);
        let framing = match (chunked, length) {
            (true, _) => Framing::Chunked,
            (false, Some(length)) => Framing::Length(length),
            (false, None) => bail!("a response with neither length nor chunks"),
        };
        Ok(Head {
            status,
            headers,
            framing,
            event_stream,
        })
    }

    async fn read_chunked(&mut self) -> Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let size = self.chunk_size().await?;
            while self.buffer.len() < size + 2 {
                self.fill().await?;
            }
            body.extend(self.buffer.drain(..size));
            self.buffer.drain(..2);
            if size == 0 {
                return Ok(body);
            }
        }
    }

    /// Reads a chunk-size line.
    async fn chunk_size(&mut self) -> Result<usize> {
        let line_end = loop {
            if let Some(at) = find(&self.buffer, b"\r\n") {
                break at;
            }
            self.fill().await?;
        };
        let size_text = std::str::from_utf8(&self.buffer[..line_end])?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .context("chunk size")?;
        self.buffer.drain(..line_end + 2);
        Ok(size)
    }

    async fn fill(&mut self) -> Result<()> {
        let mut chunk = [0u8; 8192];
        let read = self.stream.read(&mut chunk).await?;
        if read == 0 {
            bail!("the server closed the connection");
        }
        self.buffer.extend_from_slice(&chunk[..read]);
        Ok(())
    }
}

/// A response body read event by event, as it arrives.
pub struct EventStream {
    connection: Connection,
    framing: Framing,
    /// Bytes left in the current chunk (chunked) or the body (length).
    chunk_left: usize,
    /// Body text read but not yet split into events.
    pending: String,
    ended: bool,
}

impl EventStream {
    /// The next SSE event carrying a JSON-RPC message (priming events with
    /// empty data and comments are skipped), or `None` when the stream ends.
    pub async fn next_event(&mut self) -> Result<Option<Value>> {
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..end + 2).collect();
                if let Some(data) = event_data(&event) {
                    return Ok(Some(
                        serde_json::from_str(&data).context("SSE data that is not JSON")?,
                    ));
                }
                continue;
            }
            if self.ended {
                return Ok(None);
            }
            let bytes = self.next_bytes().await?;
            self.pending
                .push_str(&String::from_utf8_lossy(&bytes).replace("\r\n", "\n"));
        }
    }

    /// The next piece of the body (empty at its end, which sets `ended`).
    async fn next_bytes(&mut self) -> Result<Vec<u8>> {
        let connection = &mut self.connection;
        match self.framing {
            Framing::Length(length) => {
                if self.chunk_left == 0 && length > 0 {
                    self.chunk_left = length;
                    self.framing = Framing::Length(0);
                }
                if self.chunk_left == 0 {
                    self.ended = true;
                    return Ok(Vec::new());
                }
            }
            Framing::Chunked => {
                if self.chunk_left == 0 {
                    let size = connection.chunk_size().await?;
                    if size == 0 {
                        self.ended = true;
                        return Ok(Vec::new());
                    }
                    // The chunk's data and its closing CRLF.
                    self.chunk_left = size + 2;
                }
            }
        }
        if connection.buffer.is_empty() {
            connection.fill().await?;
        }
        let take = connection.buffer.len().min(self.chunk_left);
        self.chunk_left -= take;
        let mut bytes: Vec<u8> = connection.buffer.drain(..take).collect();
        if matches!(self.framing, Framing::Chunked) {
            // Drop whatever part of the closing CRLF this piece holds.
            let crlf_in_piece = 2usize.saturating_sub(self.chunk_left).min(bytes.len());
            bytes.truncate(bytes.len() - crlf_in_piece);
        }
        Ok(bytes)
    }
}

/// The data of one SSE event (its `data:` lines joined), `None` if empty.
fn event_data(event: &str) -> Option<String> {
    let data: Vec<&str> = event
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    let data = data.join("\n");
    (!data.trim().is_empty()).then_some(data)
}

/// The last non-empty `data:` of an SSE body: the answer, after any priming
/// event (a legacy session answers a POST with a short stream).
pub fn last_event_data(body: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|data| !data.is_empty())
        .unwrap_or_default()
        .as_bytes()
        .to_vec()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    #[test]
    fn an_event_stream_answer_is_its_last_data() {
        let body = b"data: \nid: 0/0\nretry: 3000\n\ndata: {\"id\":1,\"result\":{}}\nid: 0/1\n\n";
        assert_eq!(last_event_data(body), br#"{"id":1,"result":{}}"#);
        assert_eq!(last_event_data(b"data: \n\n"), b"");
    }

    #[test]
    fn the_messages_of_a_stream_skip_priming_events() {
        let reply = Reply {
            status: 200,
            headers: vec![],
            body: b"data: \nid: 0\n\ndata: {\"method\":\"a\"}\r\n\r\ndata: {\"id\":1}\n\n".to_vec(),
            event_stream: true,
        };
        assert_eq!(
            reply.messages().unwrap(),
            [json!({"method": "a"}), json!({"id": 1})]
        );
    }

    /// Serves `response` bytes, split at `cuts`, to one connection.
    async fn serve_once(response: &'static [u8], cuts: &'static [usize]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = [0u8; 1024];
            let _ = socket.read(&mut request).await.unwrap();
            let mut at = 0;
            for &cut in cuts.iter().chain(std::iter::once(&response.len())) {
                socket.write_all(&response[at..cut]).await.unwrap();
                socket.flush().await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                at = cut;
            }
        });
        addr
    }

    #[tokio::test]
    async fn a_chunked_stream_is_read_event_by_event_across_any_split() {
        const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
            transfer-encoding: chunked\r\n\r\n\
            8\r\ndata: \n\n\r\nf\r\ndata: {\"a\":1}\n\n\r\n\
            f\r\ndata: {\"b\":2}\n\n\r\n0\r\n\r\n";
        // The head is 80 bytes. Splits inside the head, inside data, inside a
        // size line (82, 114) and inside a closing CRLF (92, 132).
        for cuts in [&[][..], &[70, 71, 90], &[82, 92, 114, 132]] {
            let cuts: &'static [usize] = Box::leak(cuts.to_vec().into_boxed_slice());
            let addr = serve_once(RESPONSE, cuts).await;
            let connection = Connection::open(addr).await.unwrap();
            let (status, mut stream) = connection.open_stream(b"{}", "x", "").await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(stream.next_event().await.unwrap(), Some(json!({"a": 1})));
            assert_eq!(stream.next_event().await.unwrap(), Some(json!({"b": 2})));
            assert_eq!(stream.next_event().await.unwrap(), None, "{cuts:?}");
        }
    }

    /// A server that answers one request per connection, saying so
    /// (`Connection: close`) as nginx does after `keepalive_requests`, and
    /// counts the connections it took.
    async fn serve_one_request_per_connection(
        connections: usize,
    ) -> (SocketAddr, tokio::task::JoinHandle<usize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = tokio::spawn(async move {
            for n in 0..connections {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).await.unwrap();
                let body = format!("{{\"n\":{n}}}");
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                socket.write_all(response.as_bytes()).await.unwrap();
            }
            connections
        });
        (addr, served)
    }

    #[tokio::test]
    async fn after_connection_close_the_next_request_goes_on_a_new_connection() {
        let (addr, served) = serve_one_request_per_connection(3).await;
        let mut connection = Connection::open(addr).await.unwrap();
        for n in 0..3 {
            let (status, body) = connection.post(b"{}", "echo").await.unwrap();
            assert_eq!(status, 200);
            assert_eq!(
                serde_json::from_slice::<Value>(&body).unwrap(),
                json!({"n": n})
            );
        }
        assert_eq!(served.await.unwrap(), 3);
    }
}
