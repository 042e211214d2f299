//! Test-only use of the metrics endpoint (feature `test-metrics`): serve it
//! on a loopback port, request it over a real socket and read the value of
//! one series, for the tests of every service that records metrics.

#![expect(
    clippy::expect_used,
    reason = "test support: a failed scrape is a test failure"
)]

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Installs the process's metrics recorder with `catalogs` and serves it on
/// a port of 127.0.0.1 chosen by the system. Returns the endpoint's address.
pub async fn serve_on_loopback(catalogs: &[crate::metrics::Catalog]) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a loopback port for metrics");
    crate::metrics::serve(listener, catalogs).expect("install the metrics recorder")
}

/// One HTTP/1.1 request to `addr`: the response head and body.
pub async fn request(addr: SocketAddr, method: &str, path: &str) -> (String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connect to the metrics endpoint");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(head.as_bytes())
        .await
        .expect("send the request");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("read the response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    (head.to_owned(), body.to_owned())
}

/// The body of `GET /metrics` at `addr` (which must answer 200).
pub async fn scrape(addr: SocketAddr) -> String {
    let (head, body) = request(addr, "GET", "/metrics").await;
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    body
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
