//! tower's timeout middleware on a wheel: [`TimeoutLayer`] and the
//! [`Timeout`] service it makes.
//!
//! They mean what `tower::timeout::{TimeoutLayer, Timeout}` mean: every
//! request gets a deadline, and a request that misses it fails with a
//! boxed [`Elapsed`](crate::error::Elapsed). The deadline is a hashwheel timer instead of a tokio
//! one: a request that finishes first drops it, which cancels it in O(1).
//!
//! ```
//! use std::time::Duration;
//! use tower::ServiceBuilder;
//!
//! // ServiceBuilder::new().timeout(Duration::from_secs(5)), on the wheel:
//! let stack = ServiceBuilder::new().layer(hashwheel::tower::TimeoutLayer::new(Duration::from_secs(5)));
//! # let _ = stack;
//! ```
//!
//! # Turning the error into a 408
//!
//! The service's error is a [`BoxError`]; when the deadline won, it is an
//! [`Elapsed`](crate::error::Elapsed), so `err.is::<Elapsed>()` tells a timeout from the inner
//! service's own failures. An HTTP server answers it with
//! `408 Request Timeout`, as tower-http's `TimeoutLayer` does. With axum,
//! `HandleErrorLayer` does the mapping:
//!
//! ```ignore
//! use std::time::Duration;
//!
//! use axum::{error_handling::HandleErrorLayer, http::StatusCode, routing::get, BoxError, Router};
//! use hashwheel::{error::Elapsed, tower::TimeoutLayer};
//! use tower::ServiceBuilder;
//! # async fn handler() -> &'static str { "hello" }
//! # fn app() -> Router {
//!
//! let app = Router::new().route("/", get(handler)).layer(
//!     ServiceBuilder::new()
//!         .layer(HandleErrorLayer::new(|err: BoxError| async move {
//!             if err.is::<Elapsed>() {
//!                 StatusCode::REQUEST_TIMEOUT
//!             } else {
//!                 StatusCode::INTERNAL_SERVER_ERROR
//!             }
//!         }))
//!         .layer(TimeoutLayer::new(Duration::from_secs(5))),
//! );
//! # app
//! # }
//! ```
//!
//! Only available with the `tower` feature.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tower_layer::Layer;
use tower_service::Service;

use crate::engine::registry::Kind;
use crate::error::Error;
use crate::timeout::Timeout as WheelTimeout;
use crate::wheel::Wheel;
use crate::wheel_or_default::WheelOrDefault;

/// The error of a [`Timeout`] service: the inner service's error, boxed,
/// an [`Elapsed`](crate::error::Elapsed), or an [`Error`] for a request
/// shed at the wheel's `max_timers` bound. The same type as
/// `tower::BoxError`.
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Applies a [`Timeout`] to every request of the services it wraps:
/// tower's `TimeoutLayer`, timed by a hashwheel wheel.
///
/// [`TimeoutLayer::new`] times each request on the default wheel of the
/// runtime that calls the service (as [`hashwheel::timeout`](fn@crate::timeout)
/// does); [`TimeoutLayer::with_wheel`] on a given [`Wheel`].
///
/// A zero duration times out every request whose response is not ready
/// on its first poll; `Duration::MAX` lands 30 years ahead, as with tokio.
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::time::Duration;
/// use hashwheel::{error::Elapsed, tower::TimeoutLayer};
/// use tower::{service_fn, Layer, ServiceExt};
///
/// let layer = TimeoutLayer::new(Duration::from_secs(5));
/// let slow = layer.layer(service_fn(|_req: ()| async {
///     tokio::time::sleep(Duration::from_secs(10)).await;
///     Ok::<_, std::convert::Infallible>("done")
/// }));
/// let err = slow.oneshot(()).await.unwrap_err();
/// assert!(err.is::<Elapsed>());
/// # }
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct TimeoutLayer {
    timeout: Duration,
    wheel: WheelOrDefault,
}

/// A service that fails any request its inner service does not answer
/// within a duration: tower's `Timeout`, timed by a hashwheel wheel.
///
/// `poll_ready` is the inner service's (its error boxed). `call` starts the
/// clock: the deadline is the call's instant plus the duration, and the
/// [`ResponseFuture`] yields the inner response, the inner error boxed, or
/// a boxed [`Elapsed`](crate::error::Elapsed) at the deadline.
///
/// It never panics at the wheel's [`max_timers`](crate::Builder::max_timers)
/// bound: it sheds the request instead, without calling the inner service,
/// and the response is a boxed [`Error`] for which
/// [`is_at_capacity`](Error::is_at_capacity) holds (an HTTP server answers
/// `503 Service Unavailable`, as for tower's `Overloaded`).
///
/// # Examples
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use hashwheel::{error::Error, tower::Timeout};
/// use tower::{service_fn, ServiceExt};
///
/// let wheel = hashwheel::Wheel::builder().max_timers(1).build().unwrap();
/// let echo = service_fn(|req: u32| async move { Ok::<_, Infallible>(req) });
/// let service = Timeout::with_wheel(echo, wheel.clone(), Duration::from_secs(5));
/// assert_eq!(service.clone().oneshot(7).await.unwrap(), 7);
///
/// let _held = wheel.sleep(Duration::from_secs(1)); // the wheel is full
/// let err = service.oneshot(7).await.unwrap_err();
/// assert!(err.downcast_ref::<Error>().unwrap().is_at_capacity());
/// assert_eq!(wheel.metrics().refused_count(), 1);
/// # }
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub struct Timeout<S> {
    inner: S,
    layer: TimeoutLayer,
}

pin_project! {
    /// The response future of a [`Timeout`] service.
    ///
    /// The inner future is polled first, so a response that is ready on its
    /// first poll never touches the wheel. When the response comes first,
    /// dropping this future removes its timer from the wheel in O(1).
    ///
    /// # Cancel safety
    ///
    /// As cancel safe as the inner future: dropping this drops it.
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    #[derive(Debug)]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub struct ResponseFuture<F> {
        // `None`: the request was shed, the wheel being full.
        #[pin]
        timeout: Option<WheelTimeout<F>>,
    }
}

// ===== impl TimeoutLayer =====

impl TimeoutLayer {
    /// A layer that times each request out after `timeout`, on the default
    /// wheel of the runtime that calls the service.
    ///
    /// Building it looks nothing up: it can be made outside a runtime; the
    /// service it makes panics if called outside one, or in one built
    /// without its timer.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::tower::TimeoutLayer;
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// let layer = TimeoutLayer::new(Duration::from_secs(5));
    /// let fast = layer.layer(service_fn(|req: u32| async move {
    ///     Ok::<_, std::convert::Infallible>(req + 1)
    /// }));
    /// assert_eq!(fast.oneshot(41).await.unwrap(), 42);
    /// # }
    /// ```
    pub fn new(timeout: Duration) -> TimeoutLayer {
        let wheel = WheelOrDefault(None);
        TimeoutLayer { timeout, wheel }
    }

    /// A layer that times each request out after `timeout`, on `wheel`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::{error::Elapsed, tower::TimeoutLayer};
    /// use tower::{service_fn, Layer, ServiceExt};
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let layer = TimeoutLayer::with_wheel(wheel.clone(), Duration::from_secs(5));
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let err = layer.layer(slow).oneshot(()).await.unwrap_err();
    /// assert!(err.is::<Elapsed>());
    /// assert_eq!(wheel.metrics().fired_count(), 1); // timed on `wheel`
    /// # }
    /// ```
    pub fn with_wheel(wheel: Wheel, timeout: Duration) -> TimeoutLayer {
        let wheel = WheelOrDefault(Some(wheel));
        TimeoutLayer { timeout, wheel }
    }

    /// The duration each request is given.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    ///
    /// let layer = hashwheel::tower::TimeoutLayer::new(Duration::from_secs(5));
    /// assert_eq!(layer.timeout(), Duration::from_secs(5));
    /// # }
    /// ```
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

impl<S> Layer<S> for TimeoutLayer {
    type Service = Timeout<S>;

    fn layer(&self, inner: S) -> Timeout<S> {
        let layer = self.clone();
        Timeout { inner, layer }
    }
}

// ===== impl Timeout =====

impl<S> Timeout<S> {
    /// Wraps `inner`, timing each request out after `timeout` on the
    /// default wheel of the runtime that calls it.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::{error::Elapsed, tower::Timeout};
    /// use tower::{service_fn, ServiceExt};
    ///
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let err = Timeout::new(slow, Duration::from_secs(5)).oneshot(()).await.unwrap_err();
    /// assert!(err.is::<Elapsed>());
    /// # }
    /// ```
    pub fn new(inner: S, timeout: Duration) -> Timeout<S> {
        TimeoutLayer::new(timeout).layer(inner)
    }

    /// Wraps `inner`, timing each request out after `timeout` on `wheel`.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::{error::Elapsed, tower::Timeout};
    /// use tower::{service_fn, ServiceExt};
    ///
    /// let wheel = hashwheel::Wheel::new();
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let service = Timeout::with_wheel(slow, wheel.clone(), Duration::from_secs(5));
    /// let err = service.oneshot(()).await.unwrap_err();
    /// assert!(err.is::<Elapsed>());
    /// assert_eq!(wheel.metrics().fired_count(), 1); // timed on `wheel`
    /// # }
    /// ```
    pub fn with_wheel(inner: S, wheel: Wheel, timeout: Duration) -> Timeout<S> {
        TimeoutLayer::with_wheel(wheel, timeout).layer(inner)
    }

    /// The inner service.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::tower::Timeout;
    /// use tower::{service_fn, ServiceExt};
    ///
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let service = Timeout::new(slow, Duration::from_secs(5));
    /// // The inner service, called directly, has no deadline.
    /// assert_eq!(service.get_ref().clone().oneshot(()).await.unwrap(), "done");
    /// # }
    /// ```
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::tower::Timeout;
    /// use tower::{service_fn, Service, ServiceExt};
    ///
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let mut service = Timeout::new(slow, Duration::from_secs(5));
    /// // The inner service, called directly, has no deadline.
    /// let inner = service.get_mut().ready().await.unwrap();
    /// assert_eq!(inner.call(()).await.unwrap(), "done");
    /// # }
    /// ```
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Gives back the inner service.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::time::Duration;
    /// use hashwheel::tower::Timeout;
    /// use tower::{service_fn, ServiceExt};
    ///
    /// let slow = service_fn(|_req: ()| async {
    ///     tokio::time::sleep(Duration::from_secs(10)).await;
    ///     Ok::<_, std::convert::Infallible>("done")
    /// });
    /// let service = Timeout::new(slow, Duration::from_secs(5));
    /// let inner = service.into_inner(); // no deadline any more
    /// assert_eq!(inner.oneshot(()).await.unwrap(), "done");
    /// # }
    /// ```
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S, Request> Service<Request> for Timeout<S>
where
    S: Service<Request>,
    S::Error: Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    /// Starts the request's clock and calls the inner service.
    ///
    /// A wheel at its [`max_timers`](crate::Builder::max_timers) bound
    /// sheds the request, as tower's load shedding does: the inner service
    /// is not called, the refusal is counted in the wheel's
    /// [`refused_count`](crate::Metrics::refused_count), and the response
    /// future resolves at once to a boxed [`Error`] for which
    /// [`is_at_capacity`](Error::is_at_capacity) holds.
    ///
    /// # Panics
    ///
    /// On the default wheel ([`Timeout::new`], [`TimeoutLayer::new`]),
    /// outside a tokio runtime or in one built without its timer.
    #[track_caller]
    fn call(&mut self, request: Request) -> ResponseFuture<S::Future> {
        let TimeoutLayer { timeout, wheel } = &self.layer;
        let made = wheel.try_timeout_of(*timeout, || self.inner.call(request));
        let timeout = match made {
            Ok(timeout) => Some(timeout),
            Err(error) if error.is_at_capacity() => None,
            Err(error) => error.fail("timeout"),
        };
        ResponseFuture { timeout }
    }
}

// ===== impl ResponseFuture =====

impl<F, T, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    type Output = Result<T, BoxError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().timeout.as_pin_mut() {
            Some(timeout) => timeout.poll(cx).map(|out| out?.map_err(Into::into)),
            None => Poll::Ready(Err(Error(Kind::AtCapacity).into())),
        }
    }
}
