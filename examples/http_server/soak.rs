//! `--soak`: the server under faults for `--secs` (10 minutes by
//! default), on loopback, and the checks that make the process exit 1.
//!
//! Beside the demo's ordinary clients, misbehaving ones (see
//! `soak_clients.rs`); every 30 s a runtime worker blocked for 500 ms by a
//! task that sleeps on its thread; and once, early, a stretch during which
//! a filler holds the wheel at its `max_timers` bound with `try_sleep`,
//! so that the server's own timers are refused and its load shed.
//!
//! Checks: no panic; no timeout observed before its deadline; every
//! timeout the server enforced seen by the server within 5 ms of its
//! deadline (`--late-bound-ms`; those whose deadline falls in a blocked
//! worker's window, or up to 5 ms before it, within that block's length
//! plus the same bound, counted apart); every connection ended as its kind should (a head cut short by
//! a half-close or a reset ends at hyper's EOF or reset error, never by a
//! timer), and no client saw anything else; the RSS after warm-up within 5% of its value at the end
//! of warm-up (which covers the stretch at the bound, whose timers grow
//! the wheel once); the wheel's pending count back to its baseline.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use hyper::body::Bytes;
use tokio::sync::watch;
use tokio::time::{sleep, Instant};

use crate::args::Args;
use crate::soak_clients::{self, Client, ClientStats, Ctx};
use crate::soak_server::{self, Config};
use crate::soak_stats::{Listener, Stats, Timer, END_NAMES};
use crate::{server, system};

/// The wheel's bound, far above what the load keeps pending.
const MAX_PENDING: usize = 20_000;
/// The stretch at the bound: from this far into the run, for so long.
const STRETCH_AT: Duration = Duration::from_secs(4);
const STRETCH_LEN: Duration = Duration::from_secs(3);
/// A worker blocked this long, every `BLOCK_EVERY` from `FIRST_BLOCK`
/// (after the stretch, in the shortest warm-up: a block leaves more
/// connections open at once, and the allocator keeps that high-water mark).
const BLOCK: Duration = Duration::from_millis(500);
const FIRST_BLOCK: Duration = Duration::from_secs(8);
const BLOCK_EVERY: Duration = Duration::from_secs(30);
/// The shortest run that holds the stretch and the first block.
const MIN_SECS: Duration = Duration::from_secs(10);
/// The server's write timeout (for clients that never read).
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);
/// `GET /big`: far more than loopback's socket buffers hold for a client
/// with a small receive buffer.
const BIG: usize = 4 << 20;
/// The RSS may move this much after warm-up.
const RSS_DRIFT: f64 = 0.05;

/// The kinds of timeout a run must have seen, and what each is.
const ROWS: [(Listener, Timer, &str); 6] = [
    (Listener::Ordinary, Timer::Header, "idle keep-alive"),
    (Listener::Ordinary, Timer::Request, "slow request"),
    (Listener::Slowloris, Timer::Header, "slowloris head"),
    (Listener::HalfClosed, Timer::Request, "half-closed request"),
    (Listener::Reset, Timer::Request, "request of a reset"),
    (Listener::NeverRead, Timer::Write, "never-read response"),
];

pub async fn run(args: &Args) -> ExitCode {
    if args.secs < MIN_SECS {
        eprintln!("http_server --soak: --secs must be at least {MIN_SECS:?}, for the stretch at the bound and a block");
        return ExitCode::from(2);
    }
    let allowed = args.late_bound;
    let panics = count_panics();
    system::ensure_open_files(4096);
    if let Err(e) = hashwheel::Wheel::builder()
        .max_timers(MAX_PENDING)
        .build_default()
    {
        eprintln!("http_server --soak: cannot build the wheel: {e}");
        return ExitCode::from(2);
    }
    let wheel = hashwheel::Wheel::current();
    let pending_start = wheel.metrics().num_pending();
    let config = Arc::new(Config {
        header: args.header_timeout,
        request: args.request_timeout,
        write: WRITE_TIMEOUT,
        big: Bytes::from(vec![b'x'; BIG]),
    });
    let stats = Arc::new(Stats::default());
    let (stop_server, stopped) = watch::channel(false);
    let mut addrs = Vec::new();
    let mut servers = Vec::new();
    for kind in Listener::ALL {
        let listener = match server::listen(0) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("http_server --soak: cannot listen on 127.0.0.1: {e}");
                return ExitCode::from(2);
            }
        };
        addrs.push(listener.local_addr().expect("a bound listener"));
        let (c, s, st) = (config.clone(), stats.clone(), stopped.clone());
        servers.push(tokio::spawn(soak_server::run(listener, kind, c, s, st)));
    }
    let secs = args.secs;
    // The first minute, or half of a shorter run: long enough to hold the
    // stretch at the bound and the first block, and for the allocator to
    // reach the high-water mark of the connections' churn.
    let warm_up = (secs / 10).max(Duration::from_secs(60).min(secs / 2));
    println!(
        "http_server --soak: {secs:?} on 127.0.0.1 ports {}, warm-up {warm_up:?}; header-read timeout {:?}, request {:?}, write {:?}; max_timers {MAX_PENDING}",
        addrs.iter().map(|a| a.port().to_string()).collect::<Vec<_>>().join(","),
        config.header,
        config.request,
        config.write,
    );
    let plan: Vec<String> = Client::PLAN
        .iter()
        .map(|(c, n)| format!("{n} {}", c.name()))
        .collect();
    println!("clients: {}", plan.join(", "));

    let ctx = Ctx {
        addrs: addrs.try_into().expect("one address per listener"),
        config: config.clone(),
        server: stats.clone(),
        stats: Arc::new(ClientStats::new(Instant::now())),
        stop: Arc::new(AtomicBool::new(false)),
    };
    let load_start = loadavg();
    let waited_start = system::runqueue_wait();
    let cpu_start = system::cpu_time();
    let start = Instant::now();
    let mut clients = soak_clients::start(&ctx);
    let stretch = tokio::spawn(hold_at_bound(stats.clone(), start + STRETCH_AT));
    let mut rss = Rss::default();
    let mut next_block = start + FIRST_BLOCK;
    let mut second = 0;
    while start.elapsed() < secs {
        second += 1;
        tokio::select! {
            _ = sleep((start + Duration::from_secs(second)).saturating_duration_since(Instant::now())) => {}
            _ = clients.join_next() => {}
        }
        if Instant::now() >= next_block && Instant::now() + BLOCK < start + secs {
            tokio::spawn(block_a_worker(stats.clone()));
            next_block += BLOCK_EVERY;
        }
        rss.sample(start.elapsed() >= warm_up);
        if second % 10 == 0 {
            println!(
                "  {second:4} s  requests {:9}  open {:4}  timers pending {:6}  rss {}",
                stats.requests.load(Relaxed),
                stats.open.load(Relaxed),
                wheel.metrics().num_pending(),
                mib(rss.last),
            );
        }
    }
    let load_time = start.elapsed();
    let requests = stats.requests.load(Relaxed);
    ctx.stop.store(true, Relaxed);
    let drained = tokio::time::timeout(Duration::from_secs(20), async {
        while clients.join_next().await.is_some() {}
    })
    .await
    .is_ok();
    let _ = stop_server.send(true);
    for s in servers {
        let _ = s.await;
    }
    // The filler's timers are gone before the pending count is read.
    let held = stretch.await.expect("the filler does not panic");
    let settled = settle(|| stats.open.load(Relaxed) == 0).await
        && settle(|| wheel.metrics().num_pending() == pending_start).await;
    let cpu = system::cpu_time() - cpu_start;
    let load_end = loadavg();
    let waited = system::runqueue_wait()
        .zip(waited_start)
        .map_or("-".into(), |(end, start)| {
            format!("{:.1} s", (end.saturating_sub(start)).as_secs_f64())
        });

    let m = wheel.metrics();
    let pending_end = m.num_pending();
    println!("summary:");
    println!(
        "  requests   {requests} answered by the server in {:.0} s ({:.0} req/s); {} answered 503 at the bound",
        load_time.as_secs_f64(),
        requests as f64 / load_time.as_secs_f64(),
        stats.shed_requests.load(Relaxed),
    );
    let rounds: Vec<String> = Client::PLAN
        .iter()
        .map(|(c, _)| {
            let (i, w) = (*c as usize, ctx.stats.wrong[*c as usize].load(Relaxed));
            let wrong = if w > 0 {
                format!(" (wrong {w})")
            } else {
                String::new()
            };
            format!("{} {}{wrong}", c.name(), ctx.stats.rounds[i].load(Relaxed))
        })
        .collect();
    println!(
        "  rounds     {} (connections, by client kind)",
        rounds.join(", ")
    );
    for l in Listener::ALL {
        let ends = stats.ends(l);
        let text: Vec<String> = END_NAMES
            .iter()
            .zip(ends)
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        println!("  ends       {:12} {}", l.name(), text.join(", "));
    }
    let blocks = stats.blocks.lock().unwrap().clone();
    let blocked = stats.blocked();
    println!(
        "  timeouts   kind                  count    p50       p99       max (when)     <= {}   deadline in a block: count, max (bound: the block + {})",
        ms(allowed),
        ms(allowed)
    );
    let mut checks = Vec::new();
    for (l, t, what) in ROWS {
        let late = stats.lateness(l, t);
        let in_blocks: Vec<_> = blocked.iter().filter(|b| b.row == (l, t)).collect();
        let block_max = in_blocks
            .iter()
            .map(|b| b.at.saturating_duration_since(b.deadline))
            .max();
        println!(
            "             {what:20} {:6} {:>9} {:>9} {:>9} (at {:>4}) {:>6.2}%{}   {:6}, {}",
            late.count,
            ms(late.quantile(0.5)),
            ms(late.quantile(0.99)),
            ms(late.max),
            late.max_at.map_or("-".into(), |a| format!(
                "{:.0} s",
                (a - start).as_secs_f64()
            )),
            late.within(allowed) as f64 * 100.0 / late.count.max(1) as f64,
            if late.early > 0 {
                format!("  EARLY {}", late.early)
            } else {
                String::new()
            },
            in_blocks.len(),
            block_max.map_or("-".into(), ms),
        );
        checks.push((
            late.early == 0 && late.max <= allowed,
            format!(
                "{what}: none early ({}), every one within {} of its deadline (max {})",
                late.early,
                ms(allowed),
                ms(late.max)
            ),
        ));
        checks.push((
            late.count + in_blocks.len() as u64 > 0,
            format!(
                "{what}: the run saw some ({})",
                late.count + in_blocks.len() as u64
            ),
        ));
    }
    let block_len = |i: usize| {
        let (s, e) = blocks[i];
        e.unwrap_or(s + BLOCK) - s
    };
    let over: Vec<_> = blocked
        .iter()
        .filter(|b| b.at < b.deadline || b.at - b.deadline > block_len(b.block) + allowed)
        .collect();
    let longest = (0..blocks.len()).map(block_len).max().unwrap_or_default();
    println!(
        "  blocks     {} of {}: longest {}; {} timeouts with a deadline in one",
        blocks.len(),
        ms(BLOCK),
        ms(longest),
        blocked.len()
    );
    checks.push((
        over.is_empty(),
        format!("the timeouts due in a blocked worker's window: none early, each within its block + {} ({} not)", ms(allowed), over.len()),
    ));
    println!(
        "  RSS        {} at the end of warm-up, {} at the end (after warm-up: min {}, max {})",
        mib(rss.start),
        mib(rss.last),
        mib(rss.min),
        mib(rss.max)
    );
    println!(
        "  pending    {pending_start} at the start; {} at the bound, {} alive ({} held by the filler, {} refused); {pending_end} at the end",
        held.peak, held.peak_entries, held.held, held.refusals,
    );
    println!(
        "  CPU        {:.1} s of process CPU in {:.0} s ({:.0}% of one core)",
        cpu.as_secs_f64(),
        load_time.as_secs_f64(),
        cpu.as_secs_f64() / load_time.as_secs_f64() * 100.0
    );
    println!(
        "  host       load average {load_start} at the start, {load_end} at the end, on {} CPUs; the process's threads waited {waited} for a CPU",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let rss_flat = rss.start > 0
        && rss.max as f64 <= rss.start as f64 * (1.0 + RSS_DRIFT)
        && rss.min as f64 >= rss.start as f64 * (1.0 - RSS_DRIFT);
    let wrong: u64 = ctx.stats.wrong.iter().map(|w| w.load(Relaxed)).sum();
    let end_ok = |l: Listener, allowed: &[usize]| {
        let ends = stats.ends(l);
        (0..5).all(|i| allowed.contains(&i) || ends[i] == 0)
    };
    let shaped = end_ok(Listener::Ordinary, &[0, 1, 3])
        && end_ok(Listener::Slowloris, &[1, 3])
        && end_ok(Listener::NeverRead, &[1, 3])
        && end_ok(Listener::HalfClosed, &[0, 2, 3])
        && end_ok(Listener::Reset, &[0, 2, 3]);
    checks.extend([
        (panics.load(Relaxed) == 0, format!("no panic ({})", panics.load(Relaxed))),
        (
            shaped,
            "every connection ended as its kind should (slowloris and never-read by a timeout or shed, none by another error)".into(),
        ),
        (
            wrong == 0 && ctx.stats.connect.errors.load(Relaxed) == 0,
            format!(
                "no client saw a wrong answer or close outside the stretch at the bound ({wrong}), or failed to connect ({})",
                ctx.stats.connect.errors.load(Relaxed)
            ),
        ),
        (
            // The gauge sums the shards one by one, while the server's
            // timers come and go: it may read a few over the bound.
            held.peak >= MAX_PENDING && held.held <= MAX_PENDING && held.refusals > 0 && stats.shed_requests.load(Relaxed) + stats.ends(Listener::Ordinary)[3] > 0,
            format!("the wheel reached its bound ({} pending at the peak, read shard by shard; {} held by the filler, of {MAX_PENDING}) and shed load without a panic", held.peak, held.held),
        ),
        (
            rss_flat,
            format!("RSS flat after warm-up: within {:.0}% of {}", RSS_DRIFT * 100.0, mib(rss.start)),
        ),
        (
            pending_end == pending_start && settled,
            format!("pending timers back to the baseline: {pending_end} (baseline {pending_start})"),
        ),
        (drained, "every client finished its last round".into()),
    ]);
    println!("checks:");
    let mut all = true;
    for (ok, what) in checks {
        println!("  {}  {what}", if ok { "ok  " } else { "FAIL" });
        all &= ok;
    }
    for e in [
        ctx.stats.first_wrong(),
        stats.first_other(),
        ctx.stats.connect.first_error.lock().unwrap().clone(),
    ]
    .into_iter()
    .flatten()
    {
        println!("  first: {e}");
    }
    if all {
        println!("all checks hold");
        ExitCode::SUCCESS
    } else {
        println!("a check failed");
        ExitCode::FAILURE
    }
}

/// Counts panics (and still prints them, as the default hook does).
fn count_panics() -> Arc<AtomicU64> {
    let count = Arc::new(AtomicU64::new(0));
    let c = count.clone();
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        c.fetch_add(1, Relaxed);
        default(info);
    }));
    count
}

/// Blocks the worker that runs it for [`BLOCK`], as a task that calls
/// blocking code would.
async fn block_a_worker(stats: Arc<Stats>) {
    let i = {
        let mut blocks = stats.blocks.lock().unwrap();
        blocks.push((Instant::now(), None));
        blocks.len() - 1
    };
    std::thread::sleep(BLOCK);
    stats.blocks.lock().unwrap()[i].1 = Some(Instant::now());
}

/// What the filler held at the bound.
#[derive(Default)]
struct Held {
    peak: usize,
    peak_entries: usize,
    held: usize,
    refusals: u64,
}

/// From `from`, for [`STRETCH_LEN`], keeps the default wheel at its
/// bound: takes every timer it will give, and takes each one freed again
/// within a millisecond.
async fn hold_at_bound(stats: Arc<Stats>, from: Instant) -> Held {
    tokio::time::sleep_until(from).await;
    let wheel = hashwheel::Wheel::current();
    let start = Instant::now();
    *stats.stretch.lock().unwrap() = Some((start, None));
    let mut timers = Vec::new();
    let mut held = Held::default();
    loop {
        while let Ok(mut t) = wheel.try_sleep(Duration::from_secs(3600)) {
            // Polled once, so that it is in the wheel, as a server's are.
            let _ = (&mut t).now_or_never();
            timers.push(t);
        }
        held.refusals += 1;
        let m = wheel.metrics();
        held.peak = held.peak.max(m.num_pending());
        held.peak_entries = held.peak_entries.max(m.num_entries());
        if start.elapsed() >= STRETCH_LEN {
            break;
        }
        sleep(Duration::from_millis(1)).await;
    }
    held.held = timers.len();
    drop(timers);
    *stats.stretch.lock().unwrap() = Some((start, Some(Instant::now())));
    held
}

/// Waits up to 5 s for `done`.
async fn settle(done: impl Fn() -> bool) -> bool {
    for _ in 0..500 {
        if done() {
            return true;
        }
        sleep(Duration::from_millis(10)).await;
    }
    done()
}

/// RSS samples: the one at the end of warm-up, the last, and the extremes
/// after warm-up.
#[derive(Default)]
struct Rss {
    start: u64,
    last: u64,
    min: u64,
    max: u64,
}

impl Rss {
    fn sample(&mut self, warm: bool) {
        let now = system::rss_bytes().unwrap_or(0);
        self.last = now;
        if !warm {
            return;
        }
        if self.start == 0 {
            (self.start, self.min, self.max) = (now, now, now);
        }
        self.min = self.min.min(now);
        self.max = self.max.max(now);
    }
}

/// The host's 1-minute load average (Linux), for what else ran.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "-".into())
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}
