//! `subscriptions/listen` through the whole router, with a stand-in handler
//! (the transport must stream whatever the handler's `listen` sends).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ServerCapabilities, ServerConfig, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, ServerHandler};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio_util::sync::CancellationToken;

use super::{HttpOptions, router};
use crate::metrics::Metrics;

/// Accepts tool list-changed subscriptions and sends one change right away.
#[derive(Clone)]
struct OneChange;

impl ServerHandler for OneChange {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let _ = context.sink().notify_tool_list_changed().await;
        context.cancelled().await;
        Ok(())
    }
}

#[tokio::test]
async fn listen_is_a_long_lived_sse_stream() {
    let streams = CancellationToken::new();
    let app = router(
        || OneChange,
        Arc::new(Metrics::new()),
        &HttpOptions::default(),
        streams.clone(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "notifications": {"toolsListChanged": true, "promptsListChanged": true}
        }
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();

    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let wanted = "notifications/tools/list_changed";
    tokio::time::timeout(Duration::from_secs(10), async {
        while !seen.contains(wanted) {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "stream ended early: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no list_changed on the stream: {seen}"));

    assert!(seen.starts_with("HTTP/1.1 200 OK"), "{seen}");
    assert!(seen.contains("content-type: text/event-stream"), "{seen}");
    let ack = seen
        .find("notifications/subscriptions/acknowledged")
        .expect("an acknowledgement");
    assert!(
        ack < seen.find(wanted).unwrap(),
        "ack must come first: {seen}"
    );
    // Only the advertised part of the filter is honoured, tagged with the id.
    assert!(
        seen.contains(r#""notifications":{"toolsListChanged":true}"#),
        "{seen}"
    );
    assert!(
        seen.contains(r#""io.modelcontextprotocol/subscriptionId":"listen-1""#),
        "{seen}"
    );

    // Shutting the streams down ends the response (the last chunk of the
    // chunked body), so graceful shutdown is not held up by subscribers.
    streams.cancel();
    tokio::time::timeout(Duration::from_secs(5), async {
        while !seen.ends_with("\r\n0\r\n\r\n") {
            let n = stream.read(&mut buf).await.unwrap();
            assert!(n > 0, "connection closed before the body ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the listen stream did not end: {seen}"));
}
