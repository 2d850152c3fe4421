//! `hashwheel::io`'s read and write timeouts: each scenario runs on
//! hashwheel's `TimeoutStream` and on tokio-io-timeout's, on tokio's paused
//! clock, and both must see the same outcomes at the same milliseconds;
//! then what only hashwheel's wrappers do (`Unpin`, their wheel, their
//! memory, the directions they pass through).

mod io_common;

use std::io::SeekFrom;
use std::pin::Pin;
use std::time::Duration;

use hashwheel::io::{TimeoutReader, TimeoutStream, TimeoutWriter};
use hashwheel::Wheel;
use io_common::{
    advance, ms, poll_read, poll_write, read_n, send_at, Clock, Imp, Never, Ours, Outcome, Theirs,
    TIMED_OUT,
};
use tokio::io::{
    AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncSeekExt, AsyncWriteExt, DuplexStream,
};
use tokio::time::Instant;

/// Runs `scenario` on both implementations: they must agree, and match
/// `expected`.
macro_rules! both {
    ($scenario:ident $(($($arg:expr),*))?, $expected:expr) => {{
        let ours = $scenario::<Ours>($($($arg),*)?).await;
        let theirs = $scenario::<Theirs>($($($arg),*)?).await;
        assert_eq!(ours, theirs, "hashwheel (left) and tokio-io-timeout (right)");
        assert_eq!(ours, $expected);
    }};
}

// ===== side by side with tokio-io-timeout =====

/// A read timeout of 100 ms; the peer sends at 50, 200 and 250 ms.
async fn read_countdowns<I: Imp>() -> Vec<(u64, Outcome)> {
    let (peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let sender = send_at(clock, peer, &[50, 200, 250]);
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(ms(100)));
    let seen = read_n(&mut s, 5, &clock).await;
    sender.abort();
    seen
}

#[tokio::test(start_paused = true)]
async fn a_read_pending_100_ms_times_out_and_the_next_counts_anew() {
    both!(
        read_countdowns,
        vec![
            (50, Outcome::Ok(1)),
            (150, TIMED_OUT),
            (200, Outcome::Ok(1)),
            (250, Outcome::Ok(1)),
            (350, TIMED_OUT),
        ]
    );
}

/// A read timeout of 100 ms; the peer sends at 60, 130 and 190 ms: each
/// read waits past the deadline of the countdown before it, which hashwheel's
/// timer, left there, reaches first.
async fn countdowns_past_old_deadlines<I: Imp>() -> Vec<(u64, Outcome)> {
    let (peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let sender = send_at(clock, peer, &[60, 130, 190]);
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(ms(100)));
    let seen = read_n(&mut s, 4, &clock).await;
    sender.abort();
    seen
}

#[tokio::test(start_paused = true)]
async fn a_countdown_ends_at_its_own_deadline_not_at_an_older_one() {
    both!(
        countdowns_past_old_deadlines,
        vec![
            (60, Outcome::Ok(1)),
            (130, Outcome::Ok(1)),
            (190, Outcome::Ok(1)),
            (290, TIMED_OUT),
        ]
    );
}

/// A write timeout of 100 ms on a 4-byte pipe; the peer reads 4 bytes at
/// 30 and at 250 ms.
async fn write_countdowns<I: Imp>() -> Vec<(u64, Outcome)> {
    let (mut peer, socket) = tokio::io::duplex(4);
    let clock = Clock::start();
    let reader = tokio::spawn(async move {
        for at in [30, 250] {
            tokio::time::sleep_until(clock.at(at)).await;
            peer.read_exact(&mut [0; 4]).await.unwrap();
        }
        std::future::pending::<()>().await;
    });
    let mut s = I::wrap(socket);
    I::set_write(&mut s, Some(ms(100)));
    let mut seen = Vec::new();
    for _ in 0..5 {
        let r = s.write(&[7; 4]).await;
        seen.push((clock.ms(), r.into()));
    }
    reader.abort();
    seen
}

#[tokio::test(start_paused = true)]
async fn a_write_pending_100_ms_times_out_and_the_next_counts_anew() {
    both!(
        write_countdowns,
        vec![
            (0, Outcome::Ok(4)),
            (30, Outcome::Ok(4)),
            (130, TIMED_OUT),
            (230, TIMED_OUT),
            (250, Outcome::Ok(4)),
        ]
    );
}

/// A read pending from 0 with a 100 ms timeout; at 40 ms the timeout is
/// set to `new` (through the pinned setter for tokio-io-timeout), and the
/// read is polled at once (tokio-io-timeout wakes the task there) and then
/// every millisecond: when does it end?
async fn set_while_pending<I: Imp>(new: Option<Duration>) -> (u64, Outcome) {
    let (_peer, socket) = tokio::io::duplex(64);
    let clock = Clock::start();
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(ms(100)));
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(ms(40)).await;
    I::set_read(&mut s, new);
    loop {
        let r = poll_read(&mut s);
        if r != Outcome::Pending || clock.ms() == 400 {
            return (clock.ms(), r);
        }
        advance(ms(1)).await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_timeout_set_while_a_read_waits_starts_its_countdown_again() {
    both!(set_while_pending(Some(ms(100))), (140, TIMED_OUT));
    both!(set_while_pending(Some(ms(20))), (60, TIMED_OUT));
    both!(set_while_pending(Some(ms(300))), (340, TIMED_OUT));
    both!(set_while_pending(None), (400, Outcome::Pending));
}

/// Advances the paused clock to the next millisecond boundary of tokio's
/// timer, which counts from `origin`, the paused clock's start.
async fn to_a_tick_of_tokio(origin: Instant) {
    let since = origin.elapsed().as_nanos() as u64;
    advance(Duration::from_nanos(
        since.next_multiple_of(1_000_000) - since,
    ))
    .await;
}

/// Polls a read of `s` every 100 µs until it times out: the µs of `clock`
/// then.
async fn polled_until_timed_out<R: AsyncRead + Unpin>(s: &mut R, clock: Clock) -> u64 {
    loop {
        match poll_read(s) {
            Outcome::Pending => advance(Duration::from_micros(100)).await,
            r => {
                assert_eq!(r, TIMED_OUT);
                return clock.us();
            }
        }
    }
}

/// A read that starts waiting `offset_us` after a millisecond boundary of
/// tokio's timer (which counts from `origin`, the paused clock's start),
/// with a 100 ms timeout, polled every 100 µs: when (in µs from that
/// boundary) does it end?
async fn sub_millisecond<I: Imp>(origin: Instant, offset_us: u64) -> u64 {
    let (_peer, socket) = tokio::io::duplex(64);
    to_a_tick_of_tokio(origin).await;
    let clock = Clock::start();
    advance(Duration::from_micros(offset_us)).await;
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(ms(100)));
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(ms(99)).await;
    polled_until_timed_out(&mut s, clock).await
}

#[tokio::test(start_paused = true)]
async fn a_countdown_ends_at_the_millisecond_tokio_rounds_it_up_to() {
    let origin = Instant::now();
    both!(sub_millisecond(origin, 0), 100_000);
    both!(sub_millisecond(origin, 300), 101_000);
    both!(sub_millisecond(origin, 900), 101_000);
}

/// A read that waits from `first_ns` after a millisecond boundary of
/// tokio's timer, with a 100 ms timeout (set by `wrap`), gets data 50 ms
/// later, and waits again `gap_ns` after that, while the first countdown's
/// timer is still due: when (in µs from that boundary) does the second
/// countdown end, polled every 100 µs?
async fn second_countdown<R: AsyncRead + Unpin>(
    origin: Instant,
    (first_ns, gap_ns): (u64, u64),
    wrap: impl FnOnce(DuplexStream) -> R,
) -> u64 {
    let (mut peer, socket) = tokio::io::duplex(64);
    to_a_tick_of_tokio(origin).await;
    let clock = Clock::start();
    advance(Duration::from_nanos(first_ns)).await;
    let mut s = wrap(socket);
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(ms(50)).await;
    peer.write_all(b"x").await.unwrap();
    assert_eq!(poll_read(&mut s), Outcome::Ok(1));
    advance(Duration::from_nanos(gap_ns)).await;
    polled_until_timed_out(&mut s, clock).await
}

/// A countdown's end is kept exactly, whatever the timer it leaves in
/// place: a `TimeoutReader`, a stream's read timeout and a stream with two
/// timeouts against tokio-io-timeout.
#[tokio::test(start_paused = true)]
async fn a_countdown_that_starts_while_the_last_ones_timer_waits_ends_as_tokios_does() {
    let origin = Instant::now();
    // Its end, 100 ms after it starts at 50.7 ms, 51 ms, 51.1 ms and
    // 200 ns before 51 ms, rounded up to tokio's millisecond.
    for (times, end) in [
        ((300_000, 400_000), 151_000),
        ((300_000, 700_000), 151_000),
        ((300_000, 800_000), 152_000),
        // Polled every 100 µs from 50.9998 ms: first at 151.0998 ms.
        ((300_500, 699_300), 151_099),
    ] {
        let theirs = second_countdown(origin, times, |s| {
            let mut s = Box::pin(tokio_io_timeout::TimeoutReader::new(s));
            s.as_mut().set_timeout_pinned(Some(ms(100)));
            s
        })
        .await;
        let reader = second_countdown(origin, times, |s| {
            let mut s = TimeoutReader::new(s);
            s.set_timeout(Some(ms(100)));
            s
        })
        .await;
        let stream = second_countdown(origin, times, |s| {
            let mut s = TimeoutStream::new(s);
            s.set_read_timeout(Some(ms(100)));
            s
        })
        .await;
        let two = second_countdown(origin, times, |s| {
            let mut s = TimeoutStream::new(s);
            s.set_read_timeout(Some(ms(100)));
            s.set_write_timeout(Some(ms(100)));
            s
        })
        .await;
        assert_eq!(
            (reader, stream, two),
            (theirs, theirs, theirs),
            "{times:?} ns"
        );
        assert_eq!(theirs, end, "{times:?} ns");
    }
}

/// A read timeout of 100 ms on a scripted stream: the first read fails
/// with the stream's own error at 50 ms, the second has data at 130 ms.
async fn an_error_ends_the_countdown<I: Imp>() -> Vec<(u64, Outcome)> {
    let mock = tokio_test::io::Builder::new()
        .wait(ms(50))
        .read_error(std::io::Error::other("reset"))
        .wait(ms(80))
        .read(b"x")
        .build();
    let clock = Clock::start();
    let mut s = I::wrap(mock);
    I::set_read(&mut s, Some(ms(100)));
    read_n(&mut s, 2, &clock).await
}

#[tokio::test(start_paused = true)]
async fn a_read_that_fails_ends_its_countdown_too() {
    both!(
        an_error_ends_the_countdown,
        vec![
            (50, Outcome::Err(std::io::ErrorKind::Other)),
            (130, Outcome::Ok(1)),
        ]
    );
}

/// Reads and writes time out on their own countdowns: a write pending from
/// 0 with a 30 ms timeout, then a read pending from 30 with a 50 ms one.
async fn directions_apart<I: Imp>() -> Vec<(u64, Outcome)> {
    let (_peer, socket) = tokio::io::duplex(4);
    let clock = Clock::start();
    let mut s = I::wrap(socket);
    I::set_read(&mut s, Some(ms(50)));
    I::set_write(&mut s, Some(ms(30)));
    s.write_all(&[1; 4]).await.unwrap();
    let w = s.write(&[1]).await;
    let mut seen = vec![(clock.ms(), w.into())];
    let r = s.read(&mut [0; 8]).await;
    seen.push((clock.ms(), r.into()));
    seen
}

#[tokio::test(start_paused = true)]
async fn reads_and_writes_count_down_apart() {
    both!(directions_apart, vec![(30, TIMED_OUT), (80, TIMED_OUT)]);
}

// ===== what only hashwheel's wrappers do =====

fn send_sync_unpin<T: Send + Sync + Unpin>() {}

/// The wrappers are `Unpin`, `Send` and `Sync` when what they wrap is:
/// checked at compile time.
#[test]
fn the_wrappers_are_unpin_send_and_sync() {
    send_sync_unpin::<TimeoutReader<DuplexStream>>();
    send_sync_unpin::<TimeoutWriter<DuplexStream>>();
    send_sync_unpin::<TimeoutStream<DuplexStream>>();
    send_sync_unpin::<TimeoutStream<tokio::net::TcpStream>>();
}

/// A wrapper holds its stream and 56 bytes for its timeouts (a sleep, a
/// deadline and a word), with no allocation until a second timeout or a
/// wheel of its own needs more.
#[test]
fn a_wrapper_is_its_stream_and_56_bytes() {
    let duplex = size_of::<DuplexStream>();
    assert_eq!(size_of::<TimeoutReader<DuplexStream>>(), duplex + 56);
    assert_eq!(size_of::<TimeoutWriter<DuplexStream>>(), duplex + 56);
    assert_eq!(size_of::<TimeoutStream<DuplexStream>>(), duplex + 56);
}

#[tokio::test(start_paused = true)]
async fn no_timeout_until_one_is_set_and_no_timer_either() {
    let wheel = Wheel::new();
    let (_peer, socket) = tokio::io::duplex(64);
    let mut s = TimeoutStream::with_wheel(&wheel, socket);
    assert_eq!(
        (s.read_timeout(), s.write_timeout(), s.idle_timeout()),
        (None, None, None)
    );
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    advance(Duration::from_secs(86_400)).await;
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    assert_eq!(wheel.metrics().num_entries(), 0, "no timer was made");

    s.set_read_timeout(Some(ms(10)));
    assert_eq!(s.read_timeout(), Some(ms(10)));
    assert_eq!(poll_read(&mut s), Outcome::Pending);
    assert_eq!(wheel.metrics().num_pending(), 1);
    advance(ms(10)).await;
    assert_eq!(poll_read(&mut s), TIMED_OUT);
}

/// `with_wheel` puts the timer on that wheel; `new` on the runtime's
/// default wheel.
#[tokio::test(start_paused = true)]
async fn the_timer_goes_on_the_wheel_given_or_on_the_default_one() {
    let wheel = Wheel::new();
    let default = Wheel::current();
    let (_a, a) = tokio::io::duplex(64);
    let (_b, b) = tokio::io::duplex(64);
    let mut on_wheel = TimeoutReader::with_wheel(&wheel, a);
    let mut on_default = TimeoutReader::new(b);
    on_wheel.set_timeout(Some(ms(10)));
    on_default.set_timeout(Some(ms(10)));
    let before = default.metrics().num_pending();
    assert_eq!(poll_read(&mut on_wheel), Outcome::Pending);
    assert_eq!(
        (
            wheel.metrics().num_pending(),
            default.metrics().num_pending()
        ),
        (1, before)
    );
    assert_eq!(poll_read(&mut on_default), Outcome::Pending);
    assert_eq!(default.metrics().num_pending(), before + 1);
    advance(ms(10)).await;
    assert_eq!(poll_read(&mut on_wheel), TIMED_OUT);
    assert_eq!(poll_read(&mut on_default), TIMED_OUT);
}

/// A read that waits once per message, a thousand times: one wheel entry,
/// never cancelled, never fired (a wait whose deadline is later than the
/// entry's leaves the entry where it is).
#[tokio::test(start_paused = true)]
async fn a_connection_keeps_one_timer_and_moves_it() {
    let wheel = Wheel::new();
    let (mut peer, socket) = tokio::io::duplex(64);
    let mut s = TimeoutReader::with_wheel(&wheel, socket);
    s.set_timeout(Some(Duration::from_secs(30)));
    for _ in 0..1000 {
        assert_eq!(poll_read(&mut s), Outcome::Pending);
        advance(ms(1)).await;
        peer.write_all(b"x").await.unwrap();
        assert_eq!(poll_read(&mut s), Outcome::Ok(1));
    }
    let m = wheel.metrics();
    assert_eq!(
        (m.num_entries(), m.cancelled_count(), m.fired_count()),
        (1, 0, 0)
    );
}

/// A reader's writes and a writer's reads pass straight through, untimed.
#[tokio::test(start_paused = true)]
async fn the_other_direction_is_not_timed() {
    let (mut peer, socket) = tokio::io::duplex(4);
    let mut reader = TimeoutReader::new(socket);
    reader.set_timeout(Some(ms(10)));
    reader.write_all(&[1; 4]).await.unwrap();
    assert_eq!(poll_write(&mut reader, &[1]), Outcome::Pending);
    advance(Duration::from_secs(60)).await;
    assert_eq!(poll_write(&mut reader, &[1]), Outcome::Pending);
    let mut socket = reader.into_inner();
    socket.read_exact(&mut [0; 0]).await.unwrap();

    let mut writer = TimeoutWriter::new(socket);
    writer.set_timeout(Some(ms(10)));
    assert_eq!(poll_read(&mut writer), Outcome::Pending);
    advance(Duration::from_secs(60)).await;
    assert_eq!(poll_read(&mut writer), Outcome::Pending);
    peer.write_all(b"hi").await.unwrap();
    assert_eq!(poll_read(&mut writer), Outcome::Ok(2));
}

/// A write timeout covers flushes and shutdowns too.
#[tokio::test(start_paused = true)]
async fn flush_and_shutdown_are_timed_as_writes() {
    let clock = Clock::start();
    let mut writer = TimeoutWriter::new(Never);
    writer.set_timeout(Some(ms(20)));
    let e = writer.flush().await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (20, std::io::ErrorKind::TimedOut));
    let e = writer.shutdown().await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (40, std::io::ErrorKind::TimedOut));
}

/// `poll_fill_buf` reads, and is timed as a read.
#[tokio::test(start_paused = true)]
async fn fill_buf_is_timed_as_a_read() {
    let clock = Clock::start();
    let (mut peer, socket) = tokio::io::duplex(64);
    let mut reader = TimeoutReader::new(tokio::io::BufReader::new(socket));
    reader.set_timeout(Some(ms(25)));
    let e = reader.fill_buf().await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (25, std::io::ErrorKind::TimedOut));
    peer.write_all(b"line\n").await.unwrap();
    let mut line = String::new();
    reader.read_line(&mut line).await.unwrap();
    assert_eq!(line, "line\n");
}

#[tokio::test(start_paused = true)]
async fn seeks_pass_through() {
    let cursor = std::io::Cursor::new(b"0123456789".to_vec());
    let mut reader = TimeoutReader::new(cursor);
    reader.set_timeout(Some(ms(5)));
    assert_eq!(reader.seek(SeekFrom::Start(4)).await.unwrap(), 4);
    let mut buf = [0; 3];
    reader.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"456");
    assert_eq!(reader.get_ref().position(), 7);
    reader.get_mut().set_position(0);
    assert_eq!(Pin::new(&mut reader).get_pin_mut().position(), 0);
}

/// A wrapper around a stream that is not `Unpin` is pinned, as
/// tokio-io-timeout's always are, and set through the pinned setters.
#[tokio::test(start_paused = true)]
async fn a_stream_that_is_not_unpin_works_pinned() {
    let clock = Clock::start();
    let (_peer, socket) = tokio::io::duplex(64);
    // tokio-io-timeout's stream is `!Unpin`: a handy one to wrap.
    let inner = tokio_io_timeout::TimeoutStream::new(socket);
    let mut s = Box::pin(TimeoutStream::new(inner));
    s.as_mut().set_read_timeout_pinned(Some(ms(15)));
    s.as_mut().set_write_timeout_pinned(Some(ms(15)));
    s.as_mut().set_idle_timeout_pinned(None);
    assert_eq!(s.read_timeout(), Some(ms(15)));
    let e = s.read(&mut [0; 8]).await.unwrap_err();
    assert_eq!((clock.ms(), e.kind()), (15, std::io::ErrorKind::TimedOut));
    assert!(s.as_mut().get_pin_mut().read_timeout().is_none());
}
