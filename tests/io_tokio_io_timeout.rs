//! tokio-io-timeout 1.2's own test suite (`src/lib.rs`, `mod test`), each
//! test written again for `hashwheel::io`: the same streams and timeouts,
//! the same checks, with the types switched by the `use` line. Two changes
//! make them exact instead of timing-dependent: they run on tokio's paused
//! clock, and `tcp_read`'s peer is a task on that clock, not a thread that
//! sleeps on the real one. No `pin!`: hashwheel's wrappers are `Unpin`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

// was: use tokio_io_timeout::{TimeoutReader, TimeoutStream, TimeoutWriter};
use hashwheel::io::{TimeoutReader, TimeoutStream, TimeoutWriter};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{sleep_until, Instant, Sleep};

/// Their `DelayStream`: reads and writes wait until `until`, then succeed
/// (a read of no bytes, a write of all of them).
struct DelayStream {
    sleep: Pin<Box<Sleep>>,
}

impl DelayStream {
    fn new(until: Instant) -> Self {
        DelayStream {
            sleep: Box::pin(sleep_until(until)),
        }
    }
}

impl AsyncRead for DelayStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.sleep.as_mut().poll(cx).map(Ok)
    }
}

impl AsyncWrite for DelayStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.sleep.as_mut().poll(cx).map(|()| Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test(start_paused = true)]
async fn read_timeout() {
    let start = Instant::now();
    let reader = DelayStream::new(Instant::now() + Duration::from_millis(150));
    let mut reader = TimeoutReader::new(reader);
    reader.set_timeout(Some(Duration::from_millis(100)));

    let r = reader.read(&mut [0]).await;
    assert_eq!(r.err().unwrap().kind(), io::ErrorKind::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_millis(100));

    let _ = reader.read(&mut [0]).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(150));
}

#[tokio::test(start_paused = true)]
async fn read_ok() {
    let start = Instant::now();
    let reader = DelayStream::new(Instant::now() + Duration::from_millis(100));
    let mut reader = TimeoutReader::new(reader);
    reader.set_timeout(Some(Duration::from_millis(500)));

    let _ = reader.read(&mut [0]).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn write_timeout() {
    let start = Instant::now();
    let writer = DelayStream::new(Instant::now() + Duration::from_millis(150));
    let mut writer = TimeoutWriter::new(writer);
    writer.set_timeout(Some(Duration::from_millis(100)));

    let r = writer.write(&[0]).await;
    assert_eq!(r.err().unwrap().kind(), io::ErrorKind::TimedOut);
    assert_eq!(start.elapsed(), Duration::from_millis(100));

    let _ = writer.write(&[0]).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(150));
}

#[tokio::test(start_paused = true)]
async fn write_ok() {
    let start = Instant::now();
    let writer = DelayStream::new(Instant::now() + Duration::from_millis(100));
    let mut writer = TimeoutWriter::new(writer);
    writer.set_timeout(Some(Duration::from_millis(500)));

    let _ = writer.write(&[0]).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn tcp_read() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();

    let peer = tokio::spawn(async move {
        let mut socket = listener.accept().await.unwrap().0;
        tokio::time::sleep(Duration::from_millis(10)).await;
        socket.write_all(b"f").await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _ = socket.write_all(b"f").await; // this may hit an eof
    });

    let s = TcpStream::connect(&addr).await.unwrap();
    let start = Instant::now();
    let mut s = TimeoutStream::new(s);
    s.set_read_timeout(Some(Duration::from_millis(100)));
    let _ = s.read(&mut [0]).await.unwrap();
    let r = s.read(&mut [0]).await;

    match r {
        Ok(_) => panic!("unexpected success"),
        Err(ref e) if e.kind() == io::ErrorKind::TimedOut => (),
        Err(e) => panic!("{:?}", e),
    }
    // The first byte at 10 ms, then a read timeout of 100 ms.
    assert_eq!(start.elapsed(), Duration::from_millis(110));
    drop(s);
    peer.await.unwrap();
}
