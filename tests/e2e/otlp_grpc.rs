//! The gRPC side of the test OTLP receiver (`otlp_receiver.rs`): hyper's
//! HTTP/2 server on loopback, plain (prior knowledge, as gRPC over `http://`
//! is) or TLS with ALPN `h2`, answering the unary `Export` calls of the OTLP
//! trace and metrics services. Each request's message is unframed (the
//! 5-byte gRPC prefix: compressed flag, big-endian length) and kept as sent; the
//! answer is an empty `Export*ServiceResponse` with `grpc-status: 0`. Written
//! on hyper, which the host already builds, rather than tonic's server, so
//! the test build compiles no second tonic with other features.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::otlp_receiver::{Received, Store};

/// A gRPC message frame holding an empty (all-default) message.
const EMPTY_MESSAGE: [u8; 5] = [0, 0, 0, 0, 0];

/// Serves until the test process ends; returns the address.
pub fn serve(tls: Option<Arc<rustls::ServerConfig>>, store: Store) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let store = store.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match acceptor {
                        None => connection(stream, store).await,
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                connection(stream, store).await;
                            }
                        }
                    }
                });
            }
        });
    });
    addr
}

async fn connection<S>(stream: S, store: Store)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = service_fn(move |request| export(request, store.clone()));
    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

type Answer =
    StreamBody<futures::stream::Iter<std::vec::IntoIter<Result<Frame<Bytes>, Infallible>>>>;

/// One unary call: keeps the message, answers an empty one and `grpc-status: 0`.
async fn export(request: Request<Incoming>, store: Store) -> Result<Response<Answer>, Infallible> {
    let path = request.uri().path().to_string();
    let headers = request
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_string(),
                value.to_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let body = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    // One message: its compressed flag (`grpc-encoding` says how), then its
    // length.
    let message = if body.len() >= 5 {
        let length = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        body.slice(5..5 + length.min(body.len() - 5)).to_vec()
    } else {
        Vec::new()
    };
    store.lock().unwrap().push(Received {
        path,
        headers,
        body: message,
    });
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let frames = vec![
        Ok(Frame::data(Bytes::from_static(&EMPTY_MESSAGE))),
        Ok(Frame::trailers(trailers)),
    ];
    Ok(Response::builder()
        .header("content-type", "application/grpc")
        .body(StreamBody::new(futures::stream::iter(frames)))
        .unwrap())
}
