//! The line framing of the stdio transport: reading `\n`-terminated messages
//! with a length cap, and writing answers one line at a time.
//!
//! Kept apart from the screen so that framing (bytes to lines, lines to bytes)
//! and judging a line's content can each be read on their own. Every line
//! written goes through one writer task, so lines never interleave.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Largest accepted message; a longer line is discarded and answered with `-32600`.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// How much of an over-long line is kept, to read its request's id from
/// (an `id` is near the start in every client seen; one further on is not
/// read, and the answer then has no `id`).
pub(super) const KEPT_OF_TOO_LONG: usize = 4096;

/// One line read from the input.
pub(super) enum Line {
    Complete(Vec<u8>),
    /// A line over the cap, discarded but for its first bytes.
    TooLong {
        start: Vec<u8>,
    },
}

/// Reads `\n`-terminated lines with a length cap, without requiring UTF-8 (bad
/// bytes must reach the parser so they can be answered).
pub(super) struct LineReader<R> {
    inner: R,
    /// The cap, in bytes, without the newline.
    pub(super) max: usize,
    pending: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(super) fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            max,
            pending: Vec::new(),
            discarding: false,
        }
    }

    pub(super) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                // End of input: a last line without a newline still counts.
                if self.discarding {
                    self.discarding = false;
                    return Ok(Some(self.too_long()));
                }
                if self.pending.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Complete(std::mem::take(&mut self.pending))));
            }
            let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
                Some(at) => (&buf[..at], true),
                None => (buf, false),
            };
            let used = chunk.len() + usize::from(newline);
            if !self.discarding && self.pending.len() + chunk.len() > self.max {
                self.discarding = true;
                self.pending.truncate(KEPT_OF_TOO_LONG);
                self.pending.shrink_to_fit();
            }
            if self.discarding {
                let room = KEPT_OF_TOO_LONG.saturating_sub(self.pending.len());
                self.pending
                    .extend_from_slice(&chunk[..room.min(chunk.len())]);
            } else {
                self.pending.extend_from_slice(chunk);
            }
            self.inner.consume(used);
            if newline {
                if std::mem::take(&mut self.discarding) {
                    return Ok(Some(self.too_long()));
                }
                let mut line = std::mem::take(&mut self.pending);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Line::Complete(line)));
            }
        }
    }
}

impl<R> LineReader<R> {
    /// The over-long line just discarded, with the start that was kept.
    fn too_long(&mut self) -> Line {
        Line::TooLong {
            start: std::mem::take(&mut self.pending),
        }
    }
}

/// The sending end of the writer task: queues messages as lines, in the order
/// they are queued.
pub(super) struct LineWriter {
    out: mpsc::UnboundedSender<Vec<u8>>,
}

impl LineWriter {
    /// Starts the writer task on `writer`.
    pub(super) fn spawn<W: AsyncWrite + Unpin + Send + 'static>(writer: W) -> Self {
        let (out, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(writer, rx));
        Self { out }
    }

    /// Serialises `message` and queues it as one line; fails if it does not
    /// serialise or the writer task has ended.
    pub(super) fn queue<M: serde::Serialize>(&self, message: &M) -> std::io::Result<()> {
        serde_json::to_vec(message)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.out
                    .send(line)
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            })
    }
}

/// Writes queued lines in order: the lines queued when the task runs go out
/// together, in one write. Each write wakes the client, and with several
/// calls in flight the write was a sixth of the stdio thread's time (perf:
/// one `write` per answer); the answers of calls that ended together now
/// leave together, and none waits for another that has not ended.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let mut burst = Vec::new();
    while let Some(line) = lines.recv().await {
        let out = match lines.try_recv() {
            Err(_) => &line,
            Ok(next) => {
                burst.clear();
                burst.extend_from_slice(&line);
                burst.extend_from_slice(&next);
                while let Ok(more) = lines.try_recv() {
                    burst.extend_from_slice(&more);
                }
                &burst
            }
        };
        if writer.write_all(out).await.is_err() || writer.flush().await.is_err() {
            return;
        }
        // A burst of large answers should not keep its buffer for good.
        if burst.capacity() > BURST_KEPT {
            burst = Vec::new();
        }
    }
}

/// The most a burst's buffer keeps between bursts.
const BURST_KEPT: usize = 64 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each write it is given.
    #[derive(Clone, Default)]
    struct Recording(std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>);

    impl AsyncWrite for Recording {
        fn poll_write(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            self.0.lock().unwrap().push(buf.to_vec());
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn answers_queued_together_leave_in_one_write_in_order() {
        let written = Recording::default();
        let writer = LineWriter::spawn(written.clone());
        for id in 1..=3 {
            writer.queue(&serde_json::json!({ "id": id })).unwrap();
        }
        tokio::task::yield_now().await;
        writer.queue(&serde_json::json!({ "id": 4 })).unwrap();
        tokio::task::yield_now().await;
        assert_eq!(
            *written.0.lock().unwrap(),
            [
                b"{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n".to_vec(),
                b"{\"id\":4}\n".to_vec(),
            ],
            "a lone answer is written at once, on its own"
        );
    }

    #[tokio::test]
    async fn long_lines_are_discarded_whole() {
        let input: &[u8] = b"12345678901\n{}\nlast";
        let mut reader = LineReader::new(input, 8);
        assert!(matches!(
            reader.next_line().await.unwrap(),
            Some(Line::TooLong { start }) if start == b"12345678901"
        ));
        assert!(matches!(reader.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"{}"));
        assert!(
            matches!(reader.next_line().await.unwrap(), Some(Line::Complete(l)) if l == b"last")
        );
        assert!(reader.next_line().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_start_of_a_long_line_is_kept() {
        let long = format!(
            "{{\"id\":7,\"method\":\"x\",\"params\":\"{}\"}}",
            "a".repeat(100_000)
        );
        let input = format!("{long}\n{long}");
        // A small buffer: the line arrives in many chunks, as from a pipe.
        let buffered = tokio::io::BufReader::with_capacity(1000, input.as_bytes());
        let mut reader = LineReader::new(buffered, 50_000);
        for _ in 0..2 {
            let Some(Line::TooLong { start }) = reader.next_line().await.unwrap() else {
                panic!("expected a long line");
            };
            assert_eq!(start, long.as_bytes()[..KEPT_OF_TOO_LONG]);
        }
        assert!(reader.next_line().await.unwrap().is_none());
    }
}
