//! Test-only reading of the metrics endpoint (feature `test-metrics`): one
//! `GET /metrics` over a real socket and the value of one series, for the
//! tests of every service that records metrics.

#![expect(
    clippy::expect_used,
    reason = "test support: a failed scrape is a test failure"
)]

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The body of `GET /metrics` at `addr` (which must answer 200).
pub async fn scrape(addr: SocketAddr) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the metrics endpoint");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("send the request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("read the response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    body.to_owned()
}

/// The value of the one series named exactly `series` (name and labels as
/// exposed) in `text`. Other tests of a process record too, so a test
/// compares what it caused as a lower bound.
pub fn value(text: &str, series: &str) -> f64 {
    let values: Vec<f64> = text
        .lines()
        .filter_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .collect();
    assert_eq!(values.len(), 1, "{series} in\n{text}");
    values[0]
}
