//! How much of each workload `compare` runs: the rounds, the operations per
//! round and the sizes, for a quick run and a full one.

use std::time::Duration;

/// How much of each workload to run.
pub struct Config {
    pub quick: bool,
    pub rounds: usize,
    pub slow_rounds: usize,
    pub register_ops: u64,
    pub reset_ops: u64,
    pub sizes: Vec<usize>,
    /// Sizes from which insert + cancel runs `slow_rounds` rounds.
    pub slow_size: usize,
    pub memory_n: usize,
    pub bursts: Vec<usize>,
    pub pass_n: usize,
    pub queue_n: usize,
    pub late_n: usize,
    pub idle_window: Duration,
    /// Timers each task registers and cancels (the in-task rows).
    pub task_ops: u64,
    /// Timers registered, then cancelled on the same or the other worker.
    pub cross_n: usize,
    /// Connections of each server run.
    pub server_conns: Vec<usize>,
    /// Messages per second of the server runs, over all connections.
    pub server_rate: u64,
    /// How long each server run sends messages.
    pub server_run: Duration,
    /// The smallest idle timeout of the server runs.
    pub server_min_idle: Duration,
    pub server_rounds: usize,
}

impl Config {
    pub fn new(quick: bool) -> Config {
        if quick {
            Config {
                quick,
                rounds: 3,
                slow_rounds: 1,
                register_ops: 50_000,
                reset_ops: 200_000,
                sizes: vec![10_000, 100_000, 1_000_000],
                slow_size: 1_000_000,
                memory_n: 1_000_000,
                bursts: vec![100_000],
                pass_n: 100_000,
                queue_n: 100_000,
                late_n: 10_000,
                idle_window: Duration::from_millis(500),
                task_ops: 100_000,
                cross_n: 50_000,
                server_conns: vec![20_000],
                server_rate: 200_000,
                server_run: Duration::from_secs(8),
                server_min_idle: Duration::from_secs(3),
                server_rounds: 1,
            }
        } else {
            Config {
                quick,
                rounds: 5,
                slow_rounds: 3,
                register_ops: 200_000,
                reset_ops: 1_000_000,
                sizes: vec![10_000, 100_000, 1_000_000, 4_000_000],
                slow_size: 4_000_000,
                memory_n: 1_000_000,
                bursts: vec![100_000, 1_000_000],
                pass_n: 1_000_000,
                queue_n: 1_000_000,
                late_n: 10_000,
                idle_window: Duration::from_secs(2),
                task_ops: 200_000,
                cross_n: 100_000,
                server_conns: vec![200_000, 1_000_000],
                server_rate: 200_000,
                server_run: Duration::from_secs(40),
                server_min_idle: Duration::from_secs(10),
                server_rounds: 2,
            }
        }
    }
}
