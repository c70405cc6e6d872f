//! A plugin's stdout and stderr: kept in memory up to a cap, then dropped.
//!
//! wasmtime-wasi's `MemoryOutputPipe` makes a write past its capacity a trap, which
//! would crash a merely chatty plugin; this pipe keeps the first bytes (they go to
//! the log after the call), counts the rest, and never fails a write.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// How much one write may be; the guest is told it can always write this much.
const WRITE_BUDGET: usize = 64 << 10;

/// One captured stream of one call. Clones share the buffer.
#[derive(Debug, Clone)]
pub(crate) struct CapturedOutput {
    inner: Arc<Mutex<Captured>>,
}

#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    capacity: usize,
    dropped: usize,
}

impl CapturedOutput {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Captured {
                capacity,
                ..Captured::default()
            })),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut captured = self.inner.lock().expect("capture lock");
        let room = captured.capacity - captured.kept.len();
        let keep = bytes.len().min(room);
        captured.kept.extend_from_slice(&bytes[..keep]);
        captured.dropped += bytes.len() - keep;
    }

    /// What was kept, and how many bytes were dropped after it.
    pub(crate) fn contents(&self) -> (Vec<u8>, usize) {
        let captured = self.inner.lock().expect("capture lock");
        (captured.kept.clone(), captured.dropped)
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(WRITE_BUDGET)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CapturedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_capacity_and_counts_the_rest() {
        let mut out = CapturedOutput::new(4);
        out.write(Bytes::from_static(b"abc")).unwrap();
        out.write(Bytes::from_static(b"defg")).unwrap();
        assert_eq!(out.check_write().unwrap(), WRITE_BUDGET);
        assert_eq!(out.contents(), (b"abcd".to_vec(), 3));
    }
}
