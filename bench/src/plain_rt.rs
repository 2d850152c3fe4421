//! The runtime the plain-thread rows share, with a wheel and a `DelayQueue`
//! of each kind on it, as a long-running server keeps them across rounds
//! (the in-task rows' runtimes are in [`crate::task_rt`]).

use hashwheel::Wheel;
use tokio::runtime::Runtime;

use super::timers::SharedQueues;

/// A multi-threaded runtime with two workers (a small server), its threads
/// named `name`.
pub fn runtime(name: &str) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// What the throughput workloads share across rounds, as a long-running
/// server would: a runtime, a wheel on it and a `DelayQueue` of each kind.
#[derive(Debug)]
pub struct Env {
    pub rt: Runtime,
    pub wheel: Wheel,
    pub(crate) queues: SharedQueues,
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let rt = runtime("bench-rt");
        let (wheel, queues) = {
            let _g = rt.enter();
            let wheel = Wheel::new();
            let queues = SharedQueues::new(&wheel);
            (wheel, queues)
        };
        Env { rt, wheel, queues }
    }
}
