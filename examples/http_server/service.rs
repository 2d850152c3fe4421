//! The application: a handler behind a per-request timeout layer, and the
//! timeout turned into `408 Request Timeout`.
//!
//! `GET /slow` takes twice the request timeout, so it always times out;
//! every other request answers at once.

use std::convert::Infallible;
use std::future::Future;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use tower::{service_fn, Service, ServiceBuilder};

use crate::args::{Args, TimerKind};

pub type Body = Full<Bytes>;
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the server runs: a cloneable tower service of hyper requests.
pub trait App:
    Service<Request<Incoming>, Response = Response<Body>, Error = BoxError, Future: Send>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> App for S where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = BoxError, Future: Send>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// The handler; it sleeps with the timer the server was given.
fn handler(
    timer: TimerKind,
    slow: Duration,
) -> impl Service<
    Request<Incoming>,
    Response = Response<Body>,
    Error = Infallible,
    Future = impl Future<Output = Result<Response<Body>, Infallible>> + Send,
> + Clone
       + Send
       + Sync
       + 'static {
    service_fn(move |req: Request<Incoming>| async move {
        if req.uri().path() == "/slow" {
            match timer {
                TimerKind::Hashwheel => hashwheel::sleep(slow).await,
                TimerKind::Tokio => tokio::time::sleep(slow).await,
            }
        }
        Ok(Response::new(Full::new(Bytes::from_static(b"hello\n"))))
    })
}

/// The handler behind hashwheel's `TimeoutLayer`, on the runtime's
/// default wheel.
pub fn hashwheel_app(args: &Args) -> impl App {
    ServiceBuilder::new()
        .layer(hashwheel::tower::TimeoutLayer::new(args.request_timeout))
        .service(handler(TimerKind::Hashwheel, 2 * args.request_timeout))
}

/// The handler behind tower's own `TimeoutLayer` (tokio's timer).
pub fn tokio_app(args: &Args) -> impl App {
    ServiceBuilder::new()
        .layer(tower::timeout::TimeoutLayer::new(args.request_timeout))
        .service(handler(TimerKind::Tokio, 2 * args.request_timeout))
}

/// Whether `err` is a request timeout, from either layer.
pub fn is_timeout(err: &BoxError) -> bool {
    err.is::<hashwheel::error::Elapsed>() || err.is::<tower::timeout::error::Elapsed>()
}

/// The response for a request that failed: 408 for a timeout, as
/// tower-http's `TimeoutLayer` answers, 500 otherwise.
pub fn error_response(err: &BoxError) -> Response<Body> {
    let status = if is_timeout(err) {
        StatusCode::REQUEST_TIMEOUT
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    let mut res = Response::new(Full::new(Bytes::from(format!("{err}\n"))));
    *res.status_mut() = status;
    res
}
