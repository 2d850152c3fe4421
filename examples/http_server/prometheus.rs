//! The timer metrics page: a Prometheus recorder installed as the `metrics`
//! facade's recorder, which every hashwheel wheel publishes to (hashwheel's
//! `metrics` feature), served in the Prometheus text format at
//! `http://127.0.0.1:PORT/metrics`, as an operator's scraper would read it.

use std::convert::Infallible;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Bucket bounds of the driver's lag, in seconds: a healthy driver runs
/// within a millisecond of its tick; a stalled runtime's, much later.
const LAG_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Installs the Prometheus recorder as the process's `metrics` recorder;
/// call it before the first wheel is built.
pub fn install() -> PrometheusHandle {
    PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full("hashwheel_driver_lag_seconds".into()),
            LAG_BUCKETS,
        )
        .expect("the bucket list is not empty")
        .install_recorder()
        .expect("no other recorder is installed")
}

/// Serves `GET /metrics` on `listener` until `stop` turns true, and keeps
/// the recorder's histograms drained meanwhile.
pub async fn serve(
    listener: TcpListener,
    handle: PrometheusHandle,
    mut stop: watch::Receiver<bool>,
) {
    let mut upkeep = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                tokio::spawn(page(stream, handle.clone()));
            }
            _ = upkeep.tick() => handle.run_upkeep(),
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

async fn page(stream: TcpStream, handle: PrometheusHandle) {
    let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
        let handle = handle.clone();
        async move {
            let res = if req.uri().path() == "/metrics" {
                Response::builder()
                    .header("content-type", "text/plain; version=0.0.4")
                    .body(Full::new(Bytes::from(handle.render())))
            } else {
                Response::builder()
                    .status(StatusCode::NOT_FOUND)
                    .body(Full::new(Bytes::from_static(b"try /metrics\n")))
            };
            Ok::<_, Infallible>(res.expect("a valid response"))
        }
    });
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new());
    let _ = builder.serve_connection(TokioIo::new(stream), svc).await;
}

/// Reads `http://{addr}/metrics` as a scraper would; the body.
pub async fn scrape(addr: std::net::SocketAddr) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    match response.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.1 200") => Ok(body.to_owned()),
        _ => Err(std::io::Error::other(format!(
            "unexpected response: {}",
            response.lines().next().unwrap_or("")
        ))),
    }
}

/// The hashwheel series of a scrape, histogram buckets left out.
pub fn timer_lines(scraped: &str) -> Vec<&str> {
    scraped
        .lines()
        .filter(|l| l.starts_with("hashwheel_") && !l.contains("_bucket{"))
        .collect()
}
