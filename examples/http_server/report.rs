//! The final summary and the demo's own checks.

use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use crate::load::{self, Plan};
use crate::server;

/// What a run measured.
pub struct Run<'a> {
    pub load_time: Duration,
    pub responses_in_load: u64,
    pub responses: u64,
    pub cpu: Duration,
    /// Whose CPU `cpu` is.
    pub cpu_of: &'static str,
    pub latencies: &'a mut [u32],
    pub wheel: Option<hashwheel::Metrics>,
}

fn percentile(sorted: &[u32], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    Duration::from_micros(sorted[i] as u64)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub fn summary(run: Run<'_>, server: &server::Stats) {
    run.latencies.sort_unstable();
    let l = &*run.latencies;
    let rate = run.responses_in_load as f64 / run.load_time.as_secs_f64();
    println!("summary:");
    println!(
        "  requests      {} in {:.1} s of load: {rate:.0} req/s ({} in all)",
        run.responses_in_load,
        run.load_time.as_secs_f64(),
        run.responses
    );
    if !l.is_empty() {
        println!(
            "  latency       chatty requests: p50 {}  p99 {}  max {}",
            ms(percentile(l, 0.50)),
            ms(percentile(l, 0.99)),
            ms(percentile(l, 1.0))
        );
    }
    println!(
        "  timeouts      {} requests answered 408, {} idle connections reaped",
        server.timeouts.load(Relaxed),
        server.reaped.load(Relaxed)
    );
    let per_k = if run.responses == 0 {
        0.0
    } else {
        run.cpu.as_secs_f64() * 1e3 / run.responses as f64 * 1e3
    };
    println!(
        "  CPU           {:.2} s of process CPU ({}): {per_k:.1} ms per 1,000 requests",
        run.cpu.as_secs_f64(),
        run.cpu_of
    );
    if let Some(m) = run.wheel {
        println!(
            "  wheel         registered {}  fired {}  cancelled {}  pending {}  driver wake-ups {}",
            m.registered_count(),
            m.fired_count(),
            m.cancelled_count(),
            m.num_pending(),
            m.driver_wakeups_count(),
        );
        let lag = |q| {
            m.driver_lag_quantile(q)
                .map_or("-".to_owned(), |d| format!("<{}", ms(d)))
        };
        println!(
            "  driver lag    p50 {}  p99 {}  max {}",
            lag(0.5),
            lag(0.99),
            ms(m.max_driver_lag())
        );
    }
}

/// Prints every check; true when all hold.
pub fn checks(plan: Plan, client: &load::Stats, server: &server::Stats) -> bool {
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
    let idle = plan.idle as u64;
    let slow_408 = get(&client.slow_408);
    let rows = [
        (
            get(&client.idle_reaped) == idle
                && get(&client.idle_early) == 0
                && get(&server.reaped) == idle,
            format!(
                "every idle connection reaped, none early: {}/{idle} (early {}, not reaped {}, server reaped {})",
                get(&client.idle_reaped),
                get(&client.idle_early),
                get(&client.idle_not_reaped),
                get(&server.reaped),
            ),
        ),
        (
            slow_408 >= plan.slow as u64
                && get(&client.slow_wrong) == 0
                && get(&server.timeouts) == slow_408,
            format!(
                "every slow request timed out with 408: {slow_408} (otherwise {}, server's 408s {})",
                get(&client.slow_wrong),
                get(&server.timeouts),
            ),
        ),
        (
            get(&client.chatty_closed) == 0 && get(&client.chatty_ok) > 0,
            format!(
                "no chatty connection closed: {} closed, {} requests answered",
                get(&client.chatty_closed),
                get(&client.chatty_ok)
            ),
        ),
        (
            get(&client.errors) == 0
                && get(&server.conn_errors) == 0
                && get(&server.failures) == 0
                && get(&server.open) == 0,
            format!(
                "no other error: client {}, server connections {}, 500s {}, left open {}",
                get(&client.errors),
                get(&server.conn_errors),
                get(&server.failures),
                get(&server.open)
            ),
        ),
    ];
    println!("checks:");
    let mut all = true;
    for (ok, what) in rows {
        println!("  {}  {what}", if ok { "ok  " } else { "FAIL" });
        all &= ok;
    }
    for first in [&client.first_error, &server.first_error] {
        if let Some(e) = first.lock().unwrap().as_ref() {
            println!("  first error: {e}");
        }
    }
    all
}
