//! Built with hashwheel's `metrics` feature, the comparison runs as a
//! server would: with a Prometheus recorder installed, which every wheel
//! publishes to, and a scraper rendering it every few seconds (which also
//! drains the lag histogram's samples). Without the feature, nothing.

/// Installs the recorder and starts the scraper thread; what it set up,
/// for the report.
#[cfg(feature = "metrics")]
pub fn install() -> Option<&'static str> {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("no other recorder is installed");
    std::thread::Builder::new()
        .name("scraper".into())
        .spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_secs(5));
            std::hint::black_box(handle.render());
        })
        .expect("a thread");
    Some("hashwheel's `metrics` feature on, a Prometheus recorder installed, rendered every 5 s")
}

#[cfg(not(feature = "metrics"))]
pub fn install() -> Option<&'static str> {
    None
}
